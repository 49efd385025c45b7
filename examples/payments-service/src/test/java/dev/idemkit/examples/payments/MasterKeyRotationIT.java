package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.StaticKeyProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A master key rotation as docs/data-protection.md tells it, over HTTP: a payment's answer sealed
 * under the old master key; the service restarted with a new current key; the operator endpoint
 * re-wraps the data keys (operators only); the service restarted without the old key, and the old
 * answer still replays. On an embedded PostgreSQL of its own: the other tests' data keys are
 * wrapped by the demo master key.
 */
class MasterKeyRotationIT {

  private static final String ADMIN = "sk_test_admin";
  private static Path dataDir;

  @BeforeAll
  static void database() throws IOException {
    dataDir = HttpTestSupport.ownDataDir("master-key-rotation-pg");
  }

  @Test
  void afterTheRewrapTheOldMasterKeyGoesAndOldAnswersStillReplay() {
    String oldKey = "--idemkit.protection.encryption.master-keys.mk-old=" + newKey();
    String newKey = "--idemkit.protection.encryption.master-keys.mk-new=" + newKey();
    String key = HttpTestSupport.newKey();
    String ref = "rotation-" + UUID.randomUUID();
    String payment = HttpTestSupport.payment(ref, "9.00");

    String first;
    try (ConfigurableApplicationContext before =
        start(oldKey, "--idemkit.protection.encryption.current-master-key=mk-old")) {
      HttpResponse<String> created =
          post(before, "/v1/payments", HttpTestSupport.TENANT_A, key, payment);
      assertThat(created.statusCode()).isEqualTo(201);
      first = created.body();
      assertThat(masterKeysInUse(before)).containsExactly("mk-old");
    }

    try (ConfigurableApplicationContext rotated =
        start(oldKey, newKey, "--idemkit.protection.encryption.current-master-key=mk-new")) {
      assertThat(post(rotated, "/v1/payments", HttpTestSupport.TENANT_A, key, payment).body())
          .isEqualTo(first);
      // Operators only.
      assertThat(rewrap(rotated, "mk-old", HttpTestSupport.TENANT_A).statusCode()).isEqualTo(403);
      assertThat(rewrap(rotated, "mk-old", null).statusCode()).isEqualTo(401);
      assertThat(masterKeysInUse(rotated)).containsExactly("mk-old");

      HttpResponse<String> rewrapped = rewrap(rotated, "mk-old", ADMIN);

      assertThat(rewrapped.statusCode()).isEqualTo(200);
      assertThat(rewrapped.body()).contains("\"rewrappedKeys\":1").contains("\"remainingKeys\":0");
      assertThat(masterKeysInUse(rotated)).containsExactly("mk-new");
      assertThat(rewrap(rotated, "mk-old", ADMIN).body()).contains("\"rewrappedKeys\":0");
      // The current key cannot be re-wrapped away: the answer says so, nothing changes.
      HttpResponse<String> current = rewrap(rotated, "mk-new", ADMIN);
      assertThat(current.statusCode()).isEqualTo(409);
      assertThat(current.body()).contains("\"errorCode\":\"MASTER_KEY_STILL_WRAPS_DATA_KEYS\"");
      assertThat(masterKeysInUse(rotated)).containsExactly("mk-new");
    }

    try (ConfigurableApplicationContext after =
        start(newKey, "--idemkit.protection.encryption.current-master-key=mk-new")) {
      HttpResponse<String> replay =
          post(after, "/v1/payments", HttpTestSupport.TENANT_A, key, payment);
      assertThat(replay.statusCode()).isEqualTo(201);
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(replay.body()).isEqualTo(first);
      assertThat(
              jdbc(after)
                  .sql("select count(*) from payment where merchant_reference = ?")
                  .param(ref)
                  .query(Long.class)
                  .single())
          .isEqualTo(1);
    }
  }

  private static String newKey() {
    return StaticKeyProvider.newKeyBase64();
  }

  /** The service on this test's database, with {@code args} on its command line. */
  private static ConfigurableApplicationContext start(String... args) {
    return HttpTestSupport.startService(dataDir, args);
  }

  private static JdbcClient jdbc(ConfigurableApplicationContext context) {
    return context.getBean(JdbcClient.class);
  }

  private static List<String> masterKeysInUse(ConfigurableApplicationContext context) {
    return jdbc(context)
        .sql("select distinct master_key_id from idemkit_data_key order by 1")
        .query(String.class)
        .list();
  }

  private static URI uri(ConfigurableApplicationContext context, String path) {
    return URI.create(
        "http://localhost:" + context.getEnvironment().getProperty("local.server.port") + path);
  }

  private static HttpResponse<String> rewrap(
      ConfigurableApplicationContext context, String masterKeyId, String apiKey) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(context, "/v1/admin/master-keys/" + masterKeyId + "/rewrap"))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody());
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    return HttpTestSupport.send(b.build());
  }

  private static HttpResponse<String> post(
      ConfigurableApplicationContext context,
      String path,
      String apiKey,
      String idempotencyKey,
      String json) {
    return HttpTestSupport.send(
        HttpRequest.newBuilder(uri(context, path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + apiKey)
            .header("Idempotency-Key", idempotencyKey)
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build());
  }
}
