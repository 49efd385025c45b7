package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.DataProtection;
import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Stored answers as sensitive data, over HTTP: encrypted at rest with keyed fingerprints (on in
 * this service), crypto-shredding of a tenant, and each replay mode.
 */
class DataProtectionIT extends HttpTestSupport {

  static final String TENANT_SHRED = "sk_test_shred";
  static final String ADMIN = "sk_test_admin";

  @Autowired EmbeddedProvider provider;
  @Autowired DataProtection protection;

  @Test
  void aPaymentsAnswerIsEncryptedAtRestAndItsFingerprintKeyed() {
    String ref = "dp-at-rest-" + UUID.randomUUID();
    String key = newKey();

    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment(ref, "12.00"));
    HttpResponse<String> retry = post("/v1/payments", TENANT_A, key, payment(ref, "12"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    Map<String, Object> row = record(key);
    byte[] body = (byte[]) row.get("response_body");
    String stored = new String(body, java.nio.charset.StandardCharsets.ISO_8859_1);
    assertThat(stored).doesNotContain(ref).doesNotContain("12.00").doesNotContain("paymentId");
    assertThat((String) row.get("recovery_data")).doesNotContain("paymentId").contains("~sealed");
    assertThat((String) row.get("response_key_id")).startsWith("dk_");
    assertThat((String) row.get("fingerprint")).startsWith("v2:hmac-sha256:demo-fk1:");
  }

  @Test
  void afterCryptoShreddingARetryIsAClearProblemAndNothingIsChargedAgain() {
    String ref = "dp-shred-" + UUID.randomUUID();
    String key = newKey();
    HttpResponse<String> first = post("/v1/payments", TENANT_SHRED, key, payment(ref, "30.00"));
    assertThat(first.statusCode()).isEqualTo(201);
    String paymentId = first.body().substring(first.body().indexOf("\"paymentId\":\"") + 13);
    paymentId = paymentId.substring(0, 36);
    String otherKey = newKey();
    String otherRef = "dp-shred-other-" + UUID.randomUUID();
    HttpResponse<String> other =
        post("/v1/payments", TENANT_B, otherKey, payment(otherRef, "1.00"));

    HttpResponse<String> shred =
        send(
            HttpRequest.newBuilder(uri("/v1/admin/tenants/tenant_shred/data-keys"))
                .header("Authorization", "Bearer " + ADMIN)
                .DELETE()
                .build());
    assertThat(shred.statusCode()).isEqualTo(200);
    assertThat(shred.body()).contains("\"destroyedKeys\":");

    for (int i = 0; i < 2; i++) {
      HttpResponse<String> retry = post("/v1/payments", TENANT_SHRED, key, payment(ref, "30.00"));
      assertThat(retry.statusCode()).isEqualTo(410);
      assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(retry.body()).contains("\"errorCode\":\"IDEMPOTENCY_RECORD_UNREADABLE\"");
      assertThat(retry.body()).doesNotContain(ref);
    }
    // A different amount under the same key is a mismatch, shredded or not (never 410).
    HttpResponse<String> different = post("/v1/payments", TENANT_SHRED, key, payment(ref, "31.00"));
    assertThat(different.statusCode()).isEqualTo(422);
    assertThat(different.body())
        .contains("\"errorCode\":\"IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST\"");
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(charges(paymentId)).contains("\"succeeded\":1");
    assertThat(state(key)).isEqualTo("COMPLETED");
    // Another tenant's answers are untouched; the shredded tenant's new payments work.
    HttpResponse<String> otherRetry =
        post("/v1/payments", TENANT_B, otherKey, payment(otherRef, "1.00"));
    assertThat(otherRetry.body()).isEqualTo(other.body());
    String fresh = newKey();
    String freshRef = "dp-shred-fresh-" + UUID.randomUUID();
    HttpResponse<String> again =
        post("/v1/payments", TENANT_SHRED, fresh, payment(freshRef, "2.00"));
    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(post("/v1/payments", TENANT_SHRED, fresh, payment(freshRef, "2.00")).body())
        .isEqualTo(again.body());
  }

  @Test
  void shreddingWaitsUntilNoRecordOfTheTenantStillNeedsItsRecoveryData() {
    String tenant = "tenant_unsettled";
    assertThat(dataKeys(tenant, "POST").statusCode()).isEqualTo(200);
    // A payment of the tenant whose outcome is still being recovered (its sealed recovery data
    // holds the payment id).
    jdbc.sql(
            """
            insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
                fencing_token, locked_until, created_at, updated_at, expires_at, recovery_due)
            values (?, 'create_payment', 'k-unsettled', 'v1:sha256:00', 'UNKNOWN_REQUIRES_RECOVERY',
                1, now(), now(), now(), now() + interval '1 day', now() + interval '1 minute')
            """)
        .param(tenant)
        .update();

    HttpResponse<String> refused = dataKeys(tenant, "DELETE");

    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(refused.body())
        .contains("\"errorCode\":\"TENANT_HAS_UNSETTLED_RECORDS\"")
        .contains("1 record(s)");
    assertThat(keysOf(tenant)).isEqualTo(1);

    // Settled (here: recovered), the same request shreds.
    jdbc.sql("update idemkit_record set state = 'COMPLETED', recovery_due = null where tenant = ?")
        .param(tenant)
        .update();
    HttpResponse<String> shred = dataKeys(tenant, "DELETE");
    assertThat(shred.statusCode()).isEqualTo(200);
    assertThat(shred.body()).contains("\"destroyedKeys\":1");
  }

  @Test
  void aTenantNoRecordCouldHaveGetsNoDataKey() {
    for (String method : new String[] {"POST", "DELETE"}) {
      for (String tenant : new String[] {"%20", "t".repeat(201)}) {
        HttpResponse<String> r = dataKeys(tenant, method);
        assertThat(r.statusCode()).as(method + " " + tenant).isEqualTo(400);
        assertThat(r.body()).contains("\"errorCode\":\"INVALID_PATH_PARAMETER\"");
      }
    }
    assertThat(keysOf(" ")).isZero();
    assertThat(keysOf("t".repeat(201))).isZero();
  }

  /**
   * Data keys are for the tenants of this service: a name no API key gives (a typo, a tenant that
   * never was) is 404 and no key is made or destroyed. A tenant offboarded before its erasure (no
   * API key any more, data keys still held) can still be shredded.
   */
  @Test
  void anUnknownTenantIsRefusedAndGetsNoDataKey() {
    String nobody = "tenant_nobody_" + UUID.randomUUID().toString().substring(0, 8);
    for (String method : new String[] {"POST", "DELETE"}) {
      HttpResponse<String> r = dataKeys(nobody, method);
      assertThat(r.statusCode()).as(method).isEqualTo(404);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(r.body()).contains("\"errorCode\":\"TENANT_NOT_FOUND\"");
    }
    assertThat(keysOf(nobody)).isZero();

    String offboarded = "tenant_offboarded_" + UUID.randomUUID().toString().substring(0, 8);
    protection.rotateTenantKey(offboarded); // made while it still had an API key
    assertThat(dataKeys(offboarded, "POST").statusCode()).isEqualTo(404);
    assertThat(keysOf(offboarded)).isEqualTo(1);
    HttpResponse<String> shred = dataKeys(offboarded, "DELETE");
    assertThat(shred.statusCode()).isEqualTo(200);
    assertThat(shred.body()).contains("\"destroyedKeys\":1");
    assertThat(keysOf(offboarded)).isZero();

    HttpResponse<String> rotated = dataKeys("tenant_demo_b", "POST");
    assertThat(rotated.statusCode()).isEqualTo(200);
    assertThat(rotated.body()).contains("\"tenant\":\"tenant_demo_b\"");
  }

  private HttpResponse<String> dataKeys(String tenant, String method) {
    return send(
        HttpRequest.newBuilder(uri("/v1/admin/tenants/" + tenant + "/data-keys"))
            .header("Authorization", "Bearer " + ADMIN)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build());
  }

  private long keysOf(String tenant) {
    return jdbc.sql("select count(*) from idemkit_data_key where tenant = ?")
        .param(tenant)
        .query(Long.class)
        .single();
  }

  @Test
  void bodyModeReplaysTheStoredBytes() {
    String key = newKey();
    String ref = "dp-body-" + UUID.randomUUID();
    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment(ref, "5.00"));
    HttpResponse<String> retry = post("/v1/payments", TENANT_A, key, payment(ref, "5.00"));

    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
  }

  @Test
  void referenceModeRebuildsTheOrderAsItIsNow() {
    String key = newKey();
    String order =
        "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"dp-book\",\"quantity\":2,\"unitPrice\":\"12.50\"}]}";
    HttpResponse<String> created = post("/v1/orders", TENANT_A, key, order);
    assertThat(created.statusCode()).isEqualTo(201);
    assertThat(created.body()).contains("\"status\":\"PENDING_PAYMENT\"");
    String orderId = created.body().substring(created.body().indexOf("\"orderId\":\"") + 11);
    orderId = orderId.substring(0, 36);
    assertThat(
            post(
                    "/v1/orders/" + orderId + "/confirm-payment",
                    TENANT_A,
                    newKey(),
                    "{\"amount\":\"25.00\",\"currency\":\"EUR\"}")
                .statusCode())
        .isEqualTo(200);

    HttpResponse<String> retry = post("/v1/orders", TENANT_A, key, order);

    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.headers().firstValue("Location")).hasValue("/v1/orders/" + orderId);
    assertThat(retry.body()).contains(orderId).contains("\"status\":\"PAID\"");
    assertThat(retry.body()).isEqualTo(get("/v1/orders/" + orderId, TENANT_A).body());
    assertThat(
            new String(
                (byte[]) record(key).get("response_body"),
                java.nio.charset.StandardCharsets.ISO_8859_1))
        .doesNotContain("dp-book");
    assertThat(record(key).get("resource_id")).isEqualTo(orderId);
    assertThat(
            jdbc.sql("select count(*) from shop_order where tenant_id = 'tenant_demo_a' and id = ?")
                .param(UUID.fromString(orderId))
                .query(Long.class)
                .single())
        .isEqualTo(1);
  }

  @Test
  void outcomeModeReplaysOnlyWhatWasCreated() {
    String key = newKey();
    int before = TestWidgetsController.CREATED.get();
    HttpResponse<String> first = post("/v1/test/widgets", TENANT_A, key, "{}");
    HttpResponse<String> retry = post("/v1/test/widgets", TENANT_A, key, "{}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).contains("\"secret\":\"s3cr3t\"");
    String widgetId = first.headers().firstValue("Location").orElseThrow().substring(12);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo("{\"id\":\"" + widgetId + "\"}");
    assertThat(TestWidgetsController.CREATED).hasValue(before + 1);
  }

  @Test
  void outcomeModeKeepsNoBodyEvenWhenTheAnswerNamesNoResource() {
    String key = newKey();
    int before = TestWidgetsController.CREATED.get();
    HttpResponse<String> first = post("/v1/test/widgets/touch", TENANT_A, key, "{}");
    HttpResponse<String> retry = post("/v1/test/widgets/touch", TENANT_A, key, "{}");

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).contains("t0uch3d");
    assertThat(retry.statusCode()).isEqualTo(200);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo("{}");
    assertThat(TestWidgetsController.CREATED).hasValue(before + 1);
  }

  private Map<String, Object> record(String key) {
    return jdbc.sql("select * from idemkit_record_keys where idem_key = ?")
        .param(key)
        .query()
        .singleRow();
  }

  private String state(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .single();
  }

  private String charges(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(provider.baseUrl() + "/charges?reference=" + paymentId))
            .build())
        .body();
  }
}
