package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The quota on a tenant's live records, over HTTP: payments are phased, so each one admitted stays
 * live (its claim committed with the provider call's marker) while a slow provider answers. Of a
 * flood of new payments released together, exactly the limit are admitted; the others answer 429
 * with Retry-After, store nothing (no record, no payment) and are counted by the quota meter. Once
 * the admitted ones finish and the quota worker's next exchange counted it (within one sync
 * interval), the tenant may pay again.
 */
@TestPropertySource(
    properties = {
      "payments.api-keys.sk_test_live=tenant_live",
      "idemkit.quota.live-records-per-tenant=3",
      "payments.provider.latency=PT3S",
      "payments.provider.timeout=PT10S",
      "payments.provider.embedded-port=0"
    })
@DirtiesContext // its own meters, and its workers stop with it
class LiveRecordsQuotaIT extends HttpTestSupport {

  private static final String LIVE_TENANT = "sk_test_live";
  private static final int LIMIT = 3;
  private static final int FLOOD = 10;

  @Autowired MeterRegistry meters;

  private HttpResponse<String> pay(String key, String reference, String fault) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/v1/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + LIVE_TENANT)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(payment(reference, "4.00")));
    if (fault != null) {
      b.header("X-Provider-Fault", fault);
    }
    return send(b.build());
  }

  private double refusedByLiveRecords() {
    Counter c =
        meters
            .find("idempotency.quota_exceeded.count")
            .tags("operation", "create_payment", "quota", "live_records")
            .counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aFloodOfSlowPaymentsGetsExactlyTheLiveLimitAnd429sThatStoreNothing() throws Exception {
    // Warm the path first, so that the flood's claims all come within the provider's delay.
    assertThat(pay(newKey(), "live-warm-" + newKey(), null).statusCode()).isEqualTo(201);
    double refusedBefore = refusedByLiveRecords();
    List<String> keys = new ArrayList<>();
    List<String> references = new ArrayList<>();
    for (int i = 0; i < FLOOD; i++) {
      keys.add(newKey());
      references.add("live-" + newKey());
    }

    List<HttpResponse<String>> answers = new ArrayList<>();
    long[] tookMillis = new long[FLOOD];
    ExecutorService pool = Executors.newFixedThreadPool(FLOOD);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<HttpResponse<String>>> futures = new ArrayList<>();
      for (int i = 0; i < FLOOD; i++) {
        int n = i;
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  long start = System.nanoTime();
                  HttpResponse<String> answer = pay(keys.get(n), references.get(n), "latency");
                  tookMillis[n] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                  return answer;
                }));
      }
      go.countDown();
      for (Future<HttpResponse<String>> f : futures) {
        answers.add(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }

    List<Integer> admitted = new ArrayList<>();
    List<Integer> refused = new ArrayList<>();
    for (int i = 0; i < FLOOD; i++) {
      int status = answers.get(i).statusCode();
      assertThat(status).as(answers.get(i).body()).isIn(201, 429);
      (status == 201 ? admitted : refused).add(i);
    }
    assertThat(admitted).as("exactly the limit admitted").hasSize(LIMIT);
    assertThat(refused).hasSize(FLOOD - LIMIT);
    for (int i : refused) {
      HttpResponse<String> r = answers.get(i);
      assertThat(r.body()).contains("IDEMPOTENCY_QUOTA_EXCEEDED");
      assertThat(r.headers().firstValue("Retry-After")).hasValue("5");
      assertThat(recordsFor(keys.get(i))).as("no record for a refused key").isZero();
      assertThat(paymentsFor(references.get(i))).as("no payment for a refused key").isZero();
      assertThat(tookMillis[i])
          .as("refused while the admitted payments were live (the provider takes 3 s)")
          .isLessThan(3000);
    }
    for (int i : admitted) {
      assertThat(answers.get(i).body()).contains("\"status\":\"COMPLETED\"");
      assertThat(recordsFor(keys.get(i))).isEqualTo(1);
      assertThat(paymentsFor(references.get(i))).isEqualTo(1);
      assertThat(tookMillis[i]).as("the slow provider's delay").isGreaterThanOrEqualTo(3000);
    }
    assertThat(refusedByLiveRecords() - refusedBefore)
        .as("idempotency.quota_exceeded.count{quota=live_records}")
        .isEqualTo(FLOOD - LIMIT);

    // The admitted payments finished: their places are free again, and a refused key may retry.
    // Admission is decided in memory against the live records the quota worker counted at its last
    // exchange (idemkit.quota.sync-interval, 1 s): a finished record holds its place until the
    // next exchange (docs/contract.md, "Quotas"), so the retry is admitted within one interval,
    // not necessarily at once as with the old count in the claim's transaction.
    int retried = refused.get(0);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    HttpResponse<String> again = pay(keys.get(retried), references.get(retried), null);
    while (again.statusCode() == 429 && System.nanoTime() < until) {
      Thread.sleep(100);
      again = pay(keys.get(retried), references.get(retried), null);
    }
    assertThat(again.statusCode()).as(again.body()).isEqualTo(201);
    assertThat(paymentsFor(references.get(retried))).isEqualTo(1);
  }
}
