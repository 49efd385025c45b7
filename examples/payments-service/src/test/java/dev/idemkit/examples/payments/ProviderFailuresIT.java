package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * contract §5 (docs/contract.md) end to end: the provider fails in each named way and the payment
 * is charged exactly once, counted by the provider itself. The simulator runs in-process (demo
 * mode).
 */
class ProviderFailuresIT extends HttpTestSupport {

  static final String ADMIN = "sk_test_admin";

  @Autowired EmbeddedProvider provider;

  private HttpResponse<String> pay(String key, String ref, String fault) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/v1/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + TENANT_A)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(payment(ref, "10.00")));
    if (fault != null) {
      b.header("X-Provider-Fault", fault);
    }
    return send(b.build());
  }

  /**
   * A client's retry: while the answer is 409 in progress (the recovery worker may be finishing the
   * same record at that moment), waits and sends again, as a client told {@code Retry-After} does;
   * bounded.
   */
  private HttpResponse<String> retry(String key, String ref) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    HttpResponse<String> r = pay(key, ref, null);
    while (r.statusCode() == 409
        && r.body().contains("IDEMPOTENCY_REQUEST_IN_PROGRESS")
        && System.nanoTime() < deadline) {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      r = pay(key, ref, null);
    }
    return r;
  }

  private String charges(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(provider.baseUrl() + "/charges?reference=" + paymentId))
            .build())
        .body();
  }

  private static String paymentId(HttpResponse<String> r) {
    int at = r.body().indexOf("\"paymentId\":\"") + 13;
    return r.body().substring(at, at + 36);
  }

  private String state(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .single();
  }

  /** Waits for background work (the recovery worker) to reach a condition; bounded. */
  private static void eventually(Supplier<Boolean> condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.get()) {
      assertThat(System.nanoTime()).as("condition not reached in 30 s").isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  @Test
  void chargedThenDroppedTheRetryGetsTheSamePaymentAndOneCharge() {
    String key = newKey();
    String ref = "drop-" + key;

    HttpResponse<String> first = pay(key, ref, "drop-after-charge");
    HttpResponse<String> retry = retry(key, ref);

    assertThat(first.statusCode()).isEqualTo(409);
    assertThat(first.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");
    assertThat(first.headers().firstValue("Retry-After")).isPresent();
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.body())
        .contains("\"status\":\"COMPLETED\"")
        .contains("\"providerChargeId\":\"ch_");
    assertThat(charges(paymentId(retry))).contains("\"succeeded\":1");
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(pay(key, ref, null).body()).isEqualTo(retry.body());
  }

  @Test
  void slowPastTheTimeoutTheRecoveryWorkerCompletesItWithOneCharge() throws Exception {
    String key = newKey();
    String ref = "slow-" + key;

    HttpResponse<String> first = pay(key, ref, "timeout-after-charge");
    assertThat(first.statusCode()).isEqualTo(409);
    assertThat(first.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");

    eventually(() -> state(key).equals("COMPLETED")); // no client retry: the worker did it
    HttpResponse<String> retry = pay(key, ref, null);

    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(charges(paymentId(retry))).contains("\"succeeded\":1");
  }

  @Test
  void anErrorBeforeChargingRunsAgainOnRetryWithOneCharge() {
    String key = newKey();
    String ref = "503-" + key;

    HttpResponse<String> first = pay(key, ref, "error-before-charge");
    HttpResponse<String> retry = pay(key, ref, null);

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(first.body()).contains("OPERATION_INTERRUPTED");
    assertThat(state(key)).isEqualTo("COMPLETED");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(charges(paymentId(retry))).contains("\"succeeded\":1");
    assertThat(paymentsFor(ref)).isEqualTo(1);
  }

  @Test
  void aDeclineIsReplayedAndNothingIsCharged() {
    String key = newKey();
    String ref = "decline-" + key;

    HttpResponse<String> first = pay(key, ref, "decline");
    HttpResponse<String> retry = pay(key, ref, null);

    assertThat(first.statusCode()).isEqualTo(402);
    assertThat(first.body()).contains("PAYMENT_DECLINED");
    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    String paymentId =
        jdbc.sql("select id from payment where merchant_reference = ?")
            .param(ref)
            .query(String.class)
            .single();
    assertThat(charges(paymentId)).contains("\"succeeded\":0").contains("\"declined\":1");
    assertThat(
            jdbc.sql("select status from payment where id = ?::uuid")
                .param(paymentId)
                .query(String.class)
                .single())
        .isEqualTo("DECLINED");
  }

  @Test
  void afterADeclineANewKeyPaysTheSameMerchantReferenceOnce() {
    String ref = "decline-then-pay-" + newKey();
    HttpResponse<String> declined = pay(newKey(), ref, "decline");
    assertThat(declined.statusCode()).isEqualTo(402);

    String secondKey = newKey();
    HttpResponse<String> paid = pay(secondKey, ref, null);
    HttpResponse<String> third = pay(newKey(), ref, null);

    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(201);
    assertThat(paid.body()).contains("\"status\":\"COMPLETED\"");
    // The reference is held again by the charged payment: a third key finds it.
    assertThat(third.statusCode()).as(third.body()).isEqualTo(409);
    assertThat(third.body()).contains("PAYMENT_ALREADY_EXISTS");
    assertThat(
            jdbc.sql("select status from payment where merchant_reference = ? order by created_at")
                .param(ref)
                .query(String.class)
                .list())
        .containsExactly("DECLINED", "COMPLETED");
    String paidId =
        jdbc.sql("select id from payment where merchant_reference = ? and status = 'COMPLETED'")
            .param(ref)
            .query(String.class)
            .single();
    assertThat(charges(paidId)).contains("\"succeeded\":1");
    assertThat(pay(secondKey, ref, null).body()).isEqualTo(paid.body());
  }

  @Test
  void whileLookupsAreRefusedTheRecordStaysUnknownAndIsNeverChargedTwice() throws Exception {
    String key = newKey();
    String ref = "lookup-" + key;

    HttpResponse<String> first = pay(key, ref, "drop-after-charge,lookup-unavailable");
    HttpResponse<String> during = pay(key, ref, null);

    assertThat(first.statusCode()).isEqualTo(409);
    assertThat(during.statusCode()).isEqualTo(409);
    assertThat(during.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");
    assertThat(state(key)).isIn("UNKNOWN_REQUIRES_RECOVERY", "IN_PROGRESS");
    String paymentId =
        jdbc.sql("select id from payment where merchant_reference = ?")
            .param(ref)
            .query(String.class)
            .single();
    assertThat(charges(paymentId)).contains("\"succeeded\":1");

    eventually(() -> state(key).equals("COMPLETED")); // lookups came back; recovery finished it
    HttpResponse<String> after = pay(key, ref, null);
    assertThat(after.statusCode()).isEqualTo(201);
    assertThat(paymentId(after)).isEqualTo(paymentId);
    assertThat(charges(paymentId)).contains("\"succeeded\":1");
    assertThat(
            jdbc.sql("select recovery_attempts from idemkit_record where idem_key = ?")
                .param(key)
                .query(Integer.class)
                .single())
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void anUnknownFaultNameIsRefusedWith400AndNothingIsStored() {
    String key = newKey();
    String ref = "unknown-fault-" + key;

    HttpResponse<String> refused = pay(key, ref, "drop-after-chrage");

    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
    assertThat(refused.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
    assertThat(refused.body()).contains("UNKNOWN_PROVIDER_FAULT").contains("drop-after-charge");
    assertThat(recordsFor(key)).isZero();
    assertThat(paymentsFor(ref)).isZero();
    HttpResponse<String> fixed = pay(key, ref, null);
    assertThat(fixed.statusCode()).isEqualTo(201);
    assertThat(fixed.headers().firstValue("Idempotent-Replayed")).isEmpty();
  }

  @Test
  void oneRequestsLookupOutageDoesNotPauseOtherPaymentsLookups() {
    String faultedKey = newKey();
    String otherKey = newKey();
    String otherRef = "lookup-other-" + otherKey;

    assertThat(
            pay(faultedKey, "lookup-own-" + faultedKey, "drop-after-charge,lookup-unavailable")
                .statusCode())
        .isEqualTo(409);
    HttpResponse<String> lost = pay(otherKey, otherRef, "drop-after-charge");
    HttpResponse<String> retry = retry(otherKey, otherRef);

    assertThat(lost.statusCode()).isEqualTo(409);
    // The other payment's lookup answers at once: its retry finishes it (or replays the worker's).
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(charges(paymentId(retry))).contains("\"succeeded\":1");
  }

  @Test
  void anInvalidKeyInAnOperatorsRecordLookupIs400() {
    String base = "/v1/admin/idempotency/records/tenant_demo_a/create_payment/";

    HttpResponse<String> space = get(base + "a%20b", ADMIN);
    HttpResponse<String> tooLong = get(base + "k".repeat(256), ADMIN);
    HttpResponse<String> nonAscii = get(base + "%C3%A9", ADMIN);

    for (HttpResponse<String> r : java.util.List.of(space, tooLong, nonAscii)) {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
      assertThat(r.body()).contains("IDEMPOTENCY_KEY_INVALID");
    }
  }

  @Test
  void aResolutionForAScopeNoRecordCanHaveIs400() {
    String base = "/v1/admin/idempotency/records/";
    String verdict = "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"probe\"}";

    HttpResponse<String> nonAsciiKey =
        post(base + "tenant_demo_a/create_payment/%C3%A9/resolution", ADMIN, null, verdict);
    HttpResponse<String> tooLongKey =
        post(
            base + "tenant_demo_a/create_payment/" + "k".repeat(256) + "/resolution",
            ADMIN,
            null,
            verdict);
    HttpResponse<String> tooLongTenant =
        post(base + "t".repeat(300) + "/create_payment/k/resolution", ADMIN, null, verdict);

    for (HttpResponse<String> r : java.util.List.of(nonAsciiKey, tooLongKey)) {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
      assertThat(r.body()).contains("IDEMPOTENCY_KEY_INVALID");
    }
    assertThat(tooLongTenant.statusCode()).as(tooLongTenant.body()).isEqualTo(400);
    assertThat(tooLongTenant.body()).contains("INVALID_PATH_PARAMETER");
  }

  @Test
  void operatorsSeeARecordAndItsPhasesAndTenantsDoNot() {
    String key = newKey();
    HttpResponse<String> paid = pay(key, "admin-" + key, null);
    String path = "/v1/admin/idempotency/records/tenant_demo_a/create_payment/" + key;

    HttpResponse<String> asAdmin = get(path, ADMIN);
    HttpResponse<String> asTenant = get(path, TENANT_A);
    HttpResponse<String> list = get("/v1/admin/idempotency/recovery", ADMIN);
    HttpResponse<String> adminOnTenantApi =
        get(paid.headers().firstValue("Location").orElseThrow(), ADMIN);

    assertThat(asAdmin.statusCode()).isEqualTo(200);
    JsonNode record = JsonMapper.builder().build().readTree(asAdmin.body());
    assertThat(record.get("state").asString()).isEqualTo("COMPLETED");
    assertThat(record.has("recoveryPoint")).as("finished: no recovery point").isFalse();
    assertThat(record.has("lockedUntil")).as("finished: no lease").isFalse();
    assertThat(record.has("pendingExternal")).isFalse();
    assertThat(record.has("recoveryData")).isFalse();
    // An uninterrupted payment writes no history: its completion is read from the record.
    JsonNode finish = record.get("history").get(record.get("history").size() - 1);
    assertThat(finish.get("event").asString()).isEqualTo("FINISH");
    assertThat(finish.get("recoveryPoint").asString()).isEqualTo("LOCAL_PAYMENT_CREATED");
    assertThat(finish.get("responseStatus").asInt()).isEqualTo(201);
    assertThat(Instant.parse(finish.get("beganAt").asString()))
        .isEqualTo(Instant.parse(record.get("createdAt").asString()));
    assertThat(record.propertyNames()).allMatch(name -> name.matches("[a-z][A-Za-z]*"));
    assertThat(finish.propertyNames())
        .as("camelCase, as the rest of the API")
        .allMatch(name -> name.matches("[a-z][A-Za-z]*"));
    assertThat(asAdmin.body()).doesNotContain("acc_1");
    assertThat(asTenant.statusCode()).isEqualTo(403);
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(list.body()).contains("\"records\"");
    assertThat(adminOnTenantApi.statusCode()).isEqualTo(403);
  }
}
