package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.examples.payments.payments.CreatePaymentRequest;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spring.boot.RequestFingerprinter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Every row of contract §2's (docs/contract.md) table, through real HTTP. */
class ContractAnswerTableIT extends HttpTestSupport {

  @Autowired IdempotencyStore store;
  @Autowired RequestFingerprinter fingerprinter;

  private String errorCode(HttpResponse<String> response) {
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    String body = response.body();
    int at = body.indexOf("\"errorCode\":\"");
    assertThat(at).as("errorCode in " + body).isNotNegative();
    return body.substring(at + 13, body.indexOf('"', at + 13));
  }

  @Test
  void aRequiredKeyThatIsAbsentIs400AndStoresNothing() {
    long before = allRecords();
    HttpResponse<String> r = post("/v1/payments", TENANT_A, null, payment("ref-nokey", "10.00"));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(errorCode(r)).isEqualTo("IDEMPOTENCY_KEY_MISSING");
    assertThat(allRecords()).isEqualTo(before);
    assertThat(paymentsFor("ref-nokey")).isZero();
  }

  @Test
  void aMalformedKeyIs400AndStoresNothing() {
    long before = allRecords();
    HttpResponse<String> r =
        post("/v1/payments", TENANT_A, "\"unbalanced", payment("ref-bad", "10.00"));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(errorCode(r)).isEqualTo("IDEMPOTENCY_KEY_INVALID");
    assertThat(allRecords()).isEqualTo(before);
  }

  @Test
  void aRequestFailingValidationOrAuthenticationStoresNothingAndAFixedRetryIsAFirstRequest() {
    String key = newKey();
    HttpResponse<String> invalid = post("/v1/payments", TENANT_A, key, payment("ref-fix", "-5"));
    HttpResponse<String> anonymous = post("/v1/payments", null, key, payment("ref-fix", "10.00"));
    HttpResponse<String> wrongKey =
        post("/v1/payments", "sk_wrong", key, payment("ref-fix", "10.00"));
    assertThat(invalid.statusCode()).isEqualTo(400);
    assertThat(errorCode(invalid)).isEqualTo("VALIDATION_FAILED");
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(wrongKey.statusCode()).isEqualTo(401);
    assertThat(recordsFor(key)).isZero();

    HttpResponse<String> fixed = post("/v1/payments", TENANT_A, key, payment("ref-fix", "10.00"));
    assertThat(fixed.statusCode()).isEqualTo(201);
    assertThat(fixed.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(paymentsFor("ref-fix")).isEqualTo(1);
  }

  @Test
  void aKeyOnASafeMethodOrANonIdempotentEndpointIsIgnored() {
    HttpResponse<String> created =
        post("/v1/payments", TENANT_A, newKey(), payment("ref-safe", "10.00"));
    String location = created.headers().firstValue("Location").orElseThrow();
    String key = newKey();

    HttpResponse<String> read =
        send(
            request(
                    uri(location),
                    Map.of("Authorization", "Bearer " + TENANT_A, "Idempotency-Key", key))
                .GET()
                .build());
    HttpResponse<String> issue =
        post("/v1/idempotency-keys", TENANT_A, key, "{\"operation\":\"create_payment\"}");

    assertThat(read.statusCode()).isEqualTo(200);
    assertThat(issue.statusCode()).isEqualTo(201);
    assertThat(recordsFor(key)).isZero();
  }

  @Test
  void aFirstRequestRunsAndItsRetryReplaysStatusBodyContentTypeAndLocation() {
    String key = newKey();
    HttpResponse<String> first =
        post("/v1/payments", TENANT_A, key, payment("ref-replay", "10.00"));
    HttpResponse<String> retry =
        post("/v1/payments", TENANT_A, key, payment("ref-replay", "10.00"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().firstValue("Set-Cookie")).isEmpty();
    assertThat(paymentsFor("ref-replay")).isEqualTo(1);
    assertThat(
            jdbc.sql("select state from idemkit_record where idem_key = ?")
                .param(key)
                .query(String.class)
                .single())
        .isEqualTo("COMPLETED");
  }

  @Test
  void theSameKeyWithADifferentCommandIs422AndChangesNothing() {
    String key = newKey();
    HttpResponse<String> first =
        post("/v1/payments", TENANT_A, key, payment("ref-mismatch", "10.00"));
    Map<String, Object> before = recordRow(key);

    HttpResponse<String> changed =
        post("/v1/payments", TENANT_A, key, payment("ref-mismatch", "99.00"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(changed.statusCode()).isEqualTo(422);
    assertThat(errorCode(changed)).isEqualTo("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(changed.body()).doesNotContain(first.body());
    assertThat(recordRow(key)).isEqualTo(before);
    assertThat(paymentsFor("ref-mismatch")).isEqualTo(1);
  }

  private Map<String, Object> recordRow(String key) {
    return jdbc.sql(
            "select state, fingerprint, fencing_token, md5(response_body) as body, updated_at"
                + " from idemkit_record"
                + " where idem_key = ?")
        .param(key)
        .query()
        .singleRow();
  }

  /** The fingerprint the service computes for a create-payment body. */
  private Fingerprint fingerprintOf(String reference, String amount) {
    CreatePaymentRequest command =
        new CreatePaymentRequest("acc_1", amount, "EUR", reference, null);
    return fingerprinter.fingerprint("create_payment", command, Map.of(), null);
  }

  private Ownership claim(String key, String reference, Duration lease) throws Exception {
    ScopedKey id =
        new ScopedKey(
            dev.idemkit.Scope.of("tenant_demo_a", "create_payment"), IdempotencyKey.of(key));
    return store.inTransaction(
        tx -> {
          ClaimAttempt a =
              store.claim(
                  tx,
                  new NewRecord(id, fingerprintOf(reference, "10.00"), Duration.ofHours(24)),
                  lease);
          return Ownership.of(((ClaimAttempt.Inserted) a).record());
        });
  }

  @Test
  void anInProgressKeyWithALiveLeaseIs409WithRetryAfter() throws Exception {
    String key = newKey();
    claim(key, "ref-busy", Duration.ofMinutes(5));

    HttpResponse<String> r = post("/v1/payments", TENANT_A, key, payment("ref-busy", "10.00"));

    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(errorCode(r)).isEqualTo("IDEMPOTENCY_REQUEST_IN_PROGRESS");
    assertThat(Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow()))
        .isBetween(1L, 300L);
    assertThat(paymentsFor("ref-busy")).isZero();
  }

  @Test
  void anInProgressKeyWhoseOwnerDiedIsTakenOverWithTheFencingTokenBumped() throws Exception {
    String key = newKey();
    claim(key, "ref-dead-owner", Duration.ofMillis(1));

    HttpResponse<String> r =
        post("/v1/payments", TENANT_A, key, payment("ref-dead-owner", "10.00"));

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(paymentsFor("ref-dead-owner")).isEqualTo(1);
    assertThat(recordRow(key))
        .containsEntry("state", "COMPLETED")
        .containsEntry("fencing_token", 2L);
  }

  @Test
  void aFailedRetryableRecordRunsAgain() throws Exception {
    String key = newKey();
    Ownership owner = claim(key, "ref-retryable", Duration.ofMinutes(5));
    store.inTransaction(
        tx -> {
          store.suspend(tx, owner, RecordState.FAILED_RETRYABLE);
          return null;
        });

    HttpResponse<String> r = post("/v1/payments", TENANT_A, key, payment("ref-retryable", "10.00"));

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(paymentsFor("ref-retryable")).isEqualTo(1);
    assertThat(recordRow(key)).containsEntry("state", "COMPLETED");
  }

  @Test
  void aDeterministicBusinessRejectionIsReplayed() {
    String key = newKey();
    String unknownOrder = "/v1/orders/00000000-0000-0000-0000-000000000001/confirm-payment";
    String body = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";

    HttpResponse<String> first = post(unknownOrder, TENANT_A, key, body);
    HttpResponse<String> retry = post(unknownOrder, TENANT_A, key, body);

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(errorCode(first)).isEqualTo("ORDER_NOT_FOUND");
    assertThat(retry.statusCode()).isEqualTo(404);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(recordRow(key)).containsEntry("state", "FAILED_REPLAYABLE");
  }

  @Test
  void aRetryAfterTheExpiryWindowIsANewOperation() {
    String key = newKey();
    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment("ref-old", "10.00"));
    // Move the record's window into the past: the store decides expiry by its clock.
    jdbc.sql(
            "update idemkit_record set expires_at = now() - interval '1 second' where idem_key = ?")
        .param(key)
        .update();

    HttpResponse<String> later = post("/v1/payments", TENANT_A, key, payment("ref-new", "25.00"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(later.statusCode()).isEqualTo(201);
    assertThat(later.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(paymentsFor("ref-old")).isEqualTo(1);
    assertThat(paymentsFor("ref-new")).isEqualTo(1);
    HttpResponse<String> metrics = get("/actuator/prometheus", ProviderFailuresIT.ADMIN);
    assertThat(metrics.body())
        .containsPattern(
            "idempotency_expired_retry_count_total\\{operation=\"create_payment\"\\} [1-9]");
  }
}
