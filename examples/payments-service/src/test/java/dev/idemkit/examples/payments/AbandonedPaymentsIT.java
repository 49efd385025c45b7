package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import dev.idemkit.examples.payments.payments.AbandonedPayments;
import dev.idemkit.examples.payments.payments.ProviderClient;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * A payment the provider refused before charging (503) must not dangle: its client's retry resumes
 * it (same payment, same provider key), and with no retry within the grace period the sweep closes
 * it (payment FAILED, merchant reference free, the key answered with 409 PAYMENT_ABANDONED). Time
 * is moved through the sweep's {@code asOf} seam, never slept.
 */
class AbandonedPaymentsIT extends HttpTestSupport {

  @Autowired EmbeddedProvider provider;
  @Autowired AbandonedPayments sweep;

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

  /** What the provider did under the payment's derived key: 200 with the charge, or 404. */
  private int providerLookup(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(
                    provider.baseUrl() + "/charges?idempotencyKey=provider_payment_" + paymentId))
            .header("X-Merchant", ProviderClient.MERCHANT)
            .build())
        .statusCode();
  }

  private String chargesFor(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(provider.baseUrl() + "/charges?reference=" + paymentId))
            .build())
        .body();
  }

  /** A payment failed before charging: its record FAILED_RETRYABLE, its row waiting. */
  private String failedBeforeCharging(String key, String ref) {
    HttpResponse<String> first = pay(key, ref, "error-before-charge");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(503);
    assertThat(recordState(key)).isEqualTo("FAILED_RETRYABLE");
    String id = paymentIdByReference(ref);
    assertThat(paymentStatus(id)).isEqualTo("PROVIDER_REQUEST_SENT");
    return id;
  }

  private String paymentIdByReference(String ref) {
    return jdbc.sql("select id from payment where merchant_reference = ? order by created_at")
        .param(ref)
        .query(String.class)
        .list()
        .get(0);
  }

  private String paymentStatus(String id) {
    return jdbc.sql("select status from payment where id = ?::uuid")
        .param(id)
        .query(String.class)
        .single();
  }

  private String recordState(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .single();
  }

  /** The database's time plus the grace and a minute: every waiting payment's grace is over. */
  private Instant afterTheGrace() {
    Instant now = jdbc.sql("select now()").query(java.sql.Timestamp.class).single().toInstant();
    return now.plus(sweep.grace()).plus(Duration.ofMinutes(1));
  }

  private static String paymentId(HttpResponse<String> r) {
    int at = r.body().indexOf("\"paymentId\":\"") + 13;
    return r.body().substring(at, at + 36);
  }

  @Test
  void theClientsRetryResumesTheSamePaymentUnderTheSameProviderKey() {
    String key = newKey();
    String ref = "resume-" + key;
    String id = failedBeforeCharging(key, ref);
    assertThat(providerLookup(id)).isEqualTo(404);

    HttpResponse<String> retry = pay(key, ref, null);

    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(paymentId(retry)).isEqualTo(id);
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(providerLookup(id)).isEqualTo(200);
    assertThat(chargesFor(id)).contains("\"succeeded\":1");
    // A sweep after the grace leaves a resumed payment alone.
    sweep.closeAbandoned(afterTheGrace());
    assertThat(paymentStatus(id)).isEqualTo("COMPLETED");
    assertThat(pay(key, ref, null).body()).isEqualTo(retry.body());
  }

  @Test
  void meanwhileANewKeyForTheSameReferenceIsToldThePaymentExists() {
    String ref = "meanwhile-" + newKey();
    String id = failedBeforeCharging(newKey(), ref);

    sweep.closeAbandoned(null); // within the grace: nothing to close
    HttpResponse<String> other = pay(newKey(), ref, null);

    assertThat(paymentStatus(id)).isEqualTo("PROVIDER_REQUEST_SENT");
    assertThat(other.statusCode()).as(other.body()).isEqualTo(409);
    assertThat(other.body())
        .contains("PAYMENT_ALREADY_EXISTS")
        .contains("\"existingPaymentId\":\"" + id + "\"");
  }

  @Test
  void withNoRetryWithinTheGraceThePaymentIsClosedAndItsReferenceFreed() {
    String key = newKey();
    String ref = "abandoned-" + key;
    String id = failedBeforeCharging(key, ref);

    int closed = sweep.closeAbandoned(afterTheGrace());

    assertThat(closed).isGreaterThanOrEqualTo(1);
    assertThat(paymentStatus(id)).isEqualTo("FAILED");
    assertThat(recordState(key)).isEqualTo("FAILED_REPLAYABLE");
    assertThat(get("/v1/payments/" + id, TENANT_A).body()).contains("\"status\":\"FAILED\"");
    HttpResponse<String> lateRetry = pay(key, ref, null);
    assertThat(lateRetry.statusCode()).as(lateRetry.body()).isEqualTo(409);
    assertThat(lateRetry.body()).contains("PAYMENT_ABANDONED").contains(id);
    assertThat(lateRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(lateRetry.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));

    HttpResponse<String> again = pay(newKey(), ref, null);
    assertThat(again.statusCode()).as(again.body()).isEqualTo(201);
    assertThat(paymentId(again)).isNotEqualTo(id);
    assertThat(chargesFor(id)).contains("\"succeeded\":0");
    assertThat(chargesFor(paymentId(again))).contains("\"succeeded\":1");
    assertThat(paymentsFor(ref)).isEqualTo(2);
  }

  /**
   * Retries and the sweep race for the same payments, released together: each payment ends either
   * resumed and charged once, or closed and never charged; never both, never neither.
   */
  @Test
  void aRetryRacingTheSweepEitherResumesOrIsToldItWasClosedNeverBoth() throws Exception {
    int n = 12;
    List<String> keys = new ArrayList<>();
    List<String> refs = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String key = newKey();
      String ref = "race-" + key;
      keys.add(key);
      refs.add(ref);
      ids.add(failedBeforeCharging(key, ref));
    }
    Instant asOf = afterTheGrace();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(n + 2);
    try {
      List<Future<HttpResponse<String>>> retries = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String key = keys.get(i);
        String ref = refs.get(i);
        retries.add(
            pool.submit(
                () -> {
                  go.await();
                  return pay(key, ref, null);
                }));
      }
      List<Future<Integer>> sweeps = new ArrayList<>();
      for (int s = 0; s < 2; s++) {
        sweeps.add(
            pool.submit(
                () -> {
                  go.await();
                  return sweep.closeAbandoned(asOf);
                }));
      }
      go.countDown();
      for (Future<Integer> s : sweeps) {
        s.get();
      }
      for (int i = 0; i < n; i++) {
        HttpResponse<String> retry = retries.get(i).get();
        String id = ids.get(i);
        String status = paymentStatus(id);
        String charges = chargesFor(id);
        String what = id + " " + status + " " + charges + " retry: " + retry.body();
        if (status.equals("COMPLETED")) {
          assertThat(retry.statusCode()).as(what).isEqualTo(201);
          assertThat(charges).as(what).contains("\"succeeded\":1");
          assertThat(recordState(keys.get(i))).as(what).isEqualTo("COMPLETED");
        } else {
          assertThat(status).as(what).isEqualTo("FAILED");
          assertThat(retry.statusCode()).as(what).isEqualTo(409);
          assertThat(retry.body()).as(what).contains("PAYMENT_ABANDONED");
          assertThat(charges).as(what).contains("\"succeeded\":0");
          assertThat(recordState(keys.get(i))).as(what).isEqualTo("FAILED_REPLAYABLE");
        }
        assertThat(paymentsFor(refs.get(i))).as(what).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
