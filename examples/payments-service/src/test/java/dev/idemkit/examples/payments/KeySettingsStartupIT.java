package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.StaticKeyProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Master and HMAC keys are checked when the service starts, not by the first request that needs
 * them: a current master key that names no configured key, a key that is not base64 of its size,
 * and a master key configured under its id with another value (which wrapped nothing that is
 * stored) each stop the start, with one line that names the property, and no stack trace. On an
 * embedded PostgreSQL of its own, whose data keys are wrapped by this test's master key.
 */
@ExtendWith(OutputCaptureExtension.class)
class KeySettingsStartupIT {

  private static final String MASTER_KEYS = "--idemkit.protection.encryption.master-keys.";
  private static final String CURRENT = "--idemkit.protection.encryption.current-master-key=";
  private static Path dataDir;

  @BeforeAll
  static void database() throws IOException {
    dataDir = HttpTestSupport.ownDataDir("key-settings-pg");
  }

  @Test
  void aCurrentMasterKeyThatNamesNoKeyStopsTheStartWithOneLine(CapturedOutput output) {
    assertThatThrownBy(
            () ->
                start(
                    MASTER_KEYS + "mk-a=" + StaticKeyProvider.newKeyBase64(), CURRENT + "mk-typo"))
        .isNotNull();

    assertThat(description(output))
        .startsWith("idemkit.protection.encryption.current-master-key=mk-typo names no key")
        .contains("mk-a");
    assertThat(output.getAll()).doesNotContain("\tat ");
  }

  @Test
  void anHmacKeyOfTheWrongSizeStopsTheStartWithOneLine(CapturedOutput output) {
    assertThatThrownBy(
            () ->
                start(
                    "--idemkit.protection.fingerprint.hmac-keys.demo-fk1=MDEyMzQ1Njc4OWFiY2RlZg=="))
        .isNotNull();

    assertThat(description(output))
        .startsWith("idemkit.protection.fingerprint.hmac-keys.demo-fk1: ")
        .contains("at least 32 bytes");
    assertThat(output.getAll()).doesNotContain("\tat ");
  }

  @Test
  void aMasterKeyWithAnotherValueStopsTheStartInsteadOfEveryRequest(CapturedOutput output) {
    String value = StaticKeyProvider.newKeyBase64();
    String key = HttpTestSupport.newKey();
    String payment = HttpTestSupport.payment("key-settings-" + UUID.randomUUID(), "7.00");
    String first;
    try (ConfigurableApplicationContext service =
        start(MASTER_KEYS + "mk-b=" + value, CURRENT + "mk-b")) {
      HttpResponse<String> created = pay(service, key, payment);
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      first = created.body();
    }

    assertThatThrownBy(
            () -> start(MASTER_KEYS + "mk-b=" + StaticKeyProvider.newKeyBase64(), CURRENT + "mk-b"))
        .isNotNull();
    assertThat(description(output))
        .startsWith(
            "idemkit.protection.encryption.master-keys.mk-b does not unwrap the data keys it"
                + " wrapped");
    assertThat(output.getAll()).doesNotContain("\tat ").doesNotContain(value);

    // With its own value back, the stored answer replays: nothing was lost.
    try (ConfigurableApplicationContext service =
        start(MASTER_KEYS + "mk-b=" + value, CURRENT + "mk-b")) {
      HttpResponse<String> replay = pay(service, key, payment);
      assertThat(replay.statusCode()).isEqualTo(201);
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(replay.body()).isEqualTo(first);
    }
  }

  /**
   * The failure analysis Spring Boot printed: the text between {@code Description:} and {@code
   * Action:}, which must be one line.
   */
  private static String description(CapturedOutput output) {
    String all = output.getAll().replace("\r\n", "\n");
    assertThat(all).contains("APPLICATION FAILED TO START");
    int from = all.lastIndexOf("Description:");
    int to = all.indexOf("Action:", from);
    assertThat(from).as("a failure analysis in: " + all).isNotNegative();
    String description = all.substring(from + "Description:".length(), to).strip();
    assertThat(description).as("one line").doesNotContain("\n");
    return description;
  }

  private static ConfigurableApplicationContext start(String... args) {
    return HttpTestSupport.startService(dataDir, args);
  }

  private static HttpResponse<String> pay(
      ConfigurableApplicationContext service, String key, String json) {
    return HttpTestSupport.send(
        HttpRequest.newBuilder(
                URI.create(
                    "http://localhost:"
                        + service.getEnvironment().getProperty("local.server.port")
                        + "/v1/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + HttpTestSupport.TENANT_A)
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build());
  }
}
