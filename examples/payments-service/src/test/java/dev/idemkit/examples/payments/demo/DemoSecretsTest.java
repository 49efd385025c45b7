package dev.idemkit.examples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchRuntimeException;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * The demo's secrets are the demo's only: added on the embedded database (below the deployment's
 * own settings), refused anywhere else in one line that names the property, however it is set.
 */
class DemoSecretsTest {

  private static final String DEMO_MASTER_KEY = "vZW9momH4HG/J+WX/5ujDZa11cy6QnOLtR9ElVTjNic=";
  private static final String DEMO_HMAC_KEY = "dkRHs+kVnXEfC7HekZQIdbn8ylWBCYDi9zlnKLLcCtE=";
  private static final String OWN_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

  @Test
  void theEmbeddedDemoGetsItsSecretsBelowTheDeploymentsOwn() {
    StandardEnvironment environment =
        environment(
            Map.of(
                "idemkit.embedded.active", "true",
                "idemkit.protection.encryption.current-master-key", "mk1",
                "idemkit.protection.encryption.master-keys.mk1", OWN_KEY));

    new DemoSecrets().postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getProperty("payments.demo.admin-api-keys.sk_test_admin"))
        .isEqualTo("demo_operator");
    assertThat(environment.getProperty("idemkit.protection.encryption.master-keys.demo-mk1"))
        .as("still there to open what the demo key sealed")
        .isEqualTo(DEMO_MASTER_KEY);
    assertThat(environment.getProperty("idemkit.protection.encryption.current-master-key"))
        .as("the deployment's own current key wins")
        .isEqualTo("mk1");
  }

  @Test
  void outsideTheDemoNoDemoSecretIsAddedAndOwnSecretsPass() {
    StandardEnvironment environment =
        environment(
            Map.of(
                "payments.api-keys.sk_live_1", "tenant_1",
                "payments.demo.broken-store", "false",
                "idemkit.protection.encryption.master-keys.mk1", OWN_KEY,
                "idemkit.issued-keys.secret-file", "/etc/payments/issued-keys.secret"));

    new DemoSecrets().postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getProperty("payments.demo.api-keys.sk_test_demo_a")).isNull();
    assertThat(environment.getProperty("idemkit.protection.encryption.current-master-key"))
        .isNull();
  }

  @Test
  void aDemoApiKeyOutsideTheDemoIsRefused() {
    assertRefused(
        Map.of("payments.demo.api-keys.sk_test_demo_a", "tenant_demo_a"),
        "payments.demo.api-keys.sk_test_demo_a is a demo API key",
        "payments.api-keys.<key>=<tenant>");
    assertRefused(
        Map.of("PAYMENTS_DEMO_ADMINAPIKEYS_SK", "ops"),
        "payments.demo.adminapikeys.sk is a demo API key",
        "payments.admin-api-keys.<key>=<operator>");
  }

  @Test
  void theDemoMasterOrHmacKeyUnderAnyIdIsRefused() {
    assertRefused(
        Map.of("idemkit.protection.encryption.master-keys.mine", DEMO_MASTER_KEY),
        "idemkit.protection.encryption.master-keys.mine is the embedded demo's master key",
        "idemkit.protection.encryption.current-master-key=<id>");
    assertRefused(
        Map.of("idemkit.protection.fingerprint.hmac-keys.fk9", " " + DEMO_HMAC_KEY),
        "idemkit.protection.fingerprint.hmac-keys.fk9 is the embedded demo's HMAC key",
        "idemkit.protection.fingerprint.current-hmac-key=<id>");
  }

  @Test
  void theDemosIssuedKeysSecretFileIsRefused() {
    assertRefused(
        Map.of(
            "idemkit.issued-keys.secret-file",
            "/home/me/.idemkit/postgres/idemkit-issued-keys.secret"),
        "idemkit.issued-keys.secret-file names the embedded demo's issued-keys secret",
        "set idemkit.issued-keys.secret");
  }

  @Test
  void aRefusalIsReportedAsOneSentenceAndWhatToSetInstead() {
    StandardEnvironment environment =
        environment(Map.of("idemkit.protection.encryption.master-keys.mine", DEMO_MASTER_KEY));
    RuntimeException refused =
        catchRuntimeException(
            () -> new DemoSecrets().postProcessEnvironment(environment, new SpringApplication()));

    var analysis = new DemoSecretFailureAnalyzer().analyze(refused);

    assertThat(analysis.getDescription())
        .isEqualTo(
            "Refusing to start outside the embedded demo:"
                + " idemkit.protection.encryption.master-keys.mine is the embedded demo's master"
                + " key, public in this repository.");
    assertThat(analysis.getAction())
        .startsWith(
            "Set idemkit.protection.encryption.master-keys.<id>=<base64 of 32 random bytes> and"
                + " idemkit.protection.encryption.current-master-key=<id> of your own.")
        .doesNotContain("\n");
  }

  private static void assertRefused(Map<String, Object> settings, String... parts) {
    StandardEnvironment environment = environment(settings);
    assertThatThrownBy(
            () -> new DemoSecrets().postProcessEnvironment(environment, new SpringApplication()))
        .isInstanceOf(DemoSecrets.DemoSecretException.class)
        .hasMessageStartingWith("Refusing to start outside the embedded demo: ")
        .hasMessageContainingAll(parts)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  private static StandardEnvironment environment(Map<String, Object> settings) {
    StandardEnvironment environment = new StandardEnvironment();
    environment
        .getPropertySources()
        .remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
    environment.getPropertySources().addFirst(new MapPropertySource("test", settings));
    return environment;
  }
}
