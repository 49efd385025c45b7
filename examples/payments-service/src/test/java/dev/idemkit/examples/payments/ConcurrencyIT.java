package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** 50 identical requests released together: one payment, one first answer. */
class ConcurrencyIT extends HttpTestSupport {

  static List<HttpResponse<String>> race(int n, List<HttpRequest> requests) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch ready = new CountDownLatch(n);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<HttpResponse<String>>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        HttpRequest request = requests.get(i % requests.size());
        futures.add(
            pool.submit(
                () -> {
                  ready.countDown();
                  go.await();
                  return send(request);
                }));
      }
      assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
      go.countDown();
      List<HttpResponse<String>> responses = new ArrayList<>();
      for (Future<HttpResponse<String>> f : futures) {
        responses.add(f.get(60, TimeUnit.SECONDS));
      }
      return responses;
    } finally {
      pool.shutdownNow();
    }
  }

  static HttpRequest paymentRequest(java.net.URI uri, String key, String body) {
    return HttpRequest.newBuilder(uri)
        .header("Authorization", "Bearer " + TENANT_A)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  static void assertOnePayment(List<HttpResponse<String>> responses) {
    List<HttpResponse<String>> first =
        responses.stream()
            .filter(
                r ->
                    r.statusCode() == 201
                        && r.headers().firstValue("Idempotent-Replayed").isEmpty())
            .toList();
    assertThat(first).hasSize(1);
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 201) {
        assertThat(r.body()).isEqualTo(first.get(0).body());
      } else {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
        assertThat(r.body()).contains("IDEMPOTENCY_REQUEST_IN_PROGRESS");
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
      }
    }
  }

  @Test
  void fiftyConcurrentIdenticalRequestsMakeOnePayment() throws Exception {
    String key = newKey();
    String ref = "race-" + key;
    List<HttpResponse<String>> responses =
        race(50, List.of(paymentRequest(uri("/v1/payments"), key, payment(ref, "10.00"))));

    assertThat(responses).hasSize(50);
    assertOnePayment(responses);
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(recordsFor(key)).isEqualTo(1);
    assertThat(
            jdbc.sql(
                    "select count(*) from idemkit_outbox e join payment p"
                        + " on p.id::text = e.aggregate_id"
                        + " where e.event_type = 'PaymentCreated' and p.merchant_reference = ?")
                .param(ref)
                .query(Long.class)
                .single())
        .isEqualTo(1);
  }
}
