package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * contract §2 (docs/contract.md): a request refused by the rate limit leaves no record and no
 * payment, so the same request with the same key, sent again once the limit allows, is a first
 * request. The limit is a real one-second window per tenant; the test waits for it to pass rather
 * than faking time.
 */
// A second application context in this JVM: its in-process provider simulator takes any free port,
// since the first context already holds the default one.
@TestPropertySource(
    properties = {
      "payments.rate-limit-per-second=2",
      "payments.provider.embedded-port=0",
      "payments.mail.embedded-port=0"
    })
class RateLimitIT extends HttpTestSupport {

  /** A limited key and its retries: a few windows at most. */
  private static final long RETRY_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(5);

  @Test
  void aRateLimitedRequestLeavesNothingAndItsRetryAfterTheWindowIsAFirstRequest()
      throws InterruptedException {
    int errorsBefore = ERRORS.size();

    // Quick requests with distinct keys until the tenant's window is full.
    String key = null;
    String reference = null;
    HttpResponse<String> limited = null;
    List<String> admitted = new ArrayList<>();
    for (int i = 0; i < 50 && limited == null; i++) {
      String k = newKey();
      String ref = "rate-" + UUID.randomUUID();
      HttpResponse<String> r = post("/v1/payments", TENANT_A, k, payment(ref, "10.00"));
      if (r.statusCode() == 429) {
        limited = r;
        key = k;
        reference = ref;
      } else {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        admitted.add(ref);
      }
    }
    assertThat(limited).as("a 429 within 50 quick requests at 2 per second").isNotNull();
    assertThat(admitted)
        .as("at least the 2 requests the window allows")
        .hasSizeGreaterThanOrEqualTo(2);

    assertThat(limited.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(limited.body())
        .contains("\"errorCode\":\"RATE_LIMITED\"")
        .contains("\"status\":429")
        .contains("\"detail\":\"");
    long retryAfter = Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow());
    assertThat(retryAfter).isBetween(1L, 5L);
    assertThat(recordsFor(key)).as("records for the limited key").isZero();
    assertThat(paymentsFor(reference)).as("payments for the limited request").isZero();

    // Another tenant has its own window.
    String otherReference = "rate-other-" + UUID.randomUUID();
    HttpResponse<String> other =
        post("/v1/payments", TENANT_B, newKey(), payment(otherReference, "10.00"));
    assertThat(other.statusCode()).as(other.body()).isEqualTo(201);

    // The same request, same key, once the window has passed: a first request.
    long deadline = System.nanoTime() + RETRY_BUDGET_NANOS;
    Thread.sleep(TimeUnit.SECONDS.toMillis(retryAfter));
    HttpResponse<String> retry = post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
    while (retry.statusCode() == 429 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      retry = post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
    }
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(retry.body()).contains("\"merchantReference\":\"" + reference + "\"");
    assertThat(paymentsFor(reference)).isEqualTo(1);
    assertThat(recordsFor(key)).isEqualTo(1);
    assertThat(
            jdbc.sql("select state from idemkit_record where idem_key = ?")
                .param(key)
                .query(String.class)
                .single())
        .isEqualTo("COMPLETED");
    for (String ref : admitted) {
      assertThat(paymentsFor(ref)).as("payments for admitted " + ref).isEqualTo(1);
    }
    assertThat(new ArrayList<>(ERRORS.subList(errorsBefore, ERRORS.size())))
        .as("ERROR lines")
        .isEmpty();
  }
}
