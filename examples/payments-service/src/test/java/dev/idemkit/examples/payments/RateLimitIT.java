package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * contract §2 (docs/contract.md): a request refused by the rate limit leaves no record and no
 * payment, so the same request with the same key, sent again once the limit allows, is a first
 * request. And a tenant retrying one key from many connections as fast as the answers come is held
 * to the rate: each refusal waits the service's refusal pause (1 s) before its 429, and its
 * refusals are answered in turn, 16 a second, while another tenant is served at once. The limit is
 * real, per tenant; the tests wait rather than fake time.
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
    Thread.sleep(1100); // the bucket full again after the other test

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

  @Test
  void aRetryFloodFromFortyConnectionsIsHeldToTheRateAndEachRefusalWaitsThePause()
      throws Exception {
    String reference = "rate-flood-" + UUID.randomUUID();
    String key = newKey();
    Thread.sleep(1100); // the bucket full again after the other test
    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);

    int connections = 40; // more than idemkit.quota.max-paused-refusals-per-tenant (16)
    long floodNanos = TimeUnit.SECONDS.toNanos(3);
    ExecutorService pool = Executors.newFixedThreadPool(connections);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<int[]>> counts = new ArrayList<>();
    long started;
    try {
      for (int c = 0; c < connections; c++) {
        counts.add(
            pool.submit(
                () -> {
                  go.await();
                  long end = System.nanoTime() + floodNanos;
                  int replayed = 0;
                  int refused = 0;
                  long shortestRefusal = Long.MAX_VALUE;
                  while (System.nanoTime() < end) {
                    long sent = System.nanoTime();
                    HttpResponse<String> r =
                        post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
                    if (r.statusCode() == 429) {
                      assertThat(r.body()).contains("\"errorCode\":\"RATE_LIMITED\"");
                      refused++;
                      shortestRefusal = Math.min(shortestRefusal, System.nanoTime() - sent);
                    } else {
                      assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
                      assertThat(r.headers().firstValue("Idempotent-Replayed")).hasValue("true");
                      replayed++;
                    }
                  }
                  return new int[] {
                    replayed, refused, (int) TimeUnit.NANOSECONDS.toMillis(shortestRefusal)
                  };
                }));
      }
      started = System.nanoTime();
      go.countDown();

      // Meanwhile another tenant pays, at once.
      HttpResponse<String> other =
          post("/v1/payments", TENANT_B, newKey(), payment("rate-other-" + UUID.randomUUID(), "1"));
      assertThat(other.statusCode()).as(other.body()).isEqualTo(201);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
          .as("the other tenant's payment, in ms, during the flood")
          .isLessThan(900);

      int replayed = 0;
      int refused = 0;
      int shortestRefusalMs = Integer.MAX_VALUE;
      for (Future<int[]> f : counts) {
        int[] c = f.get(60, TimeUnit.SECONDS);
        replayed += c[0];
        refused += c[1];
        shortestRefusalMs = Math.min(shortestRefusalMs, c[2]);
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      // 2 a second and one second's worth at once: at most 2 + 2 x the flood's seconds.
      assertThat(replayed)
          .as("replays admitted in %.1f s at 2 a second", seconds)
          .isBetween(2, (int) Math.ceil(2 + 2 * seconds));
      assertThat(refused).as("refusals").isPositive();
      // Answered in turn, 16 a second (idemkit.quota.max-paused-refusals-per-tenant a pause):
      // without the pause they would be refused thousands of times a second, and with a pause
      // per connection 40 times a second.
      assertThat(refused)
          .as("refusals in %.1f s", seconds)
          .isLessThanOrEqualTo((int) Math.ceil(16 * (seconds + 1)));
      assertThat(shortestRefusalMs).as("the quickest 429, in ms").isGreaterThanOrEqualTo(900);
    } finally {
      pool.shutdownNow();
    }
    assertThat(paymentsFor(reference)).as("one payment for the flooded key").isEqualTo(1);
    assertThat(recordsFor(key)).isEqualTo(1);
  }
}
