package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Floods are bounded: a tenant's new keys over its quota are refused with 429 and store nothing; a
 * flood of one key against a slow first request holds no connection for long, so other requests are
 * still served; and a double submit of an order makes one order.
 */
@TestPropertySource(
    properties = {
      "payments.api-keys.sk_test_flood=tenant_flood",
      "payments.api-keys.sk_test_others=tenant_others",
      "idemkit.claim-wait=PT1S",
      "spring.datasource.hikari.maximum-pool-size=8",
      "spring.datasource.hikari.connection-timeout=20000",
      "payments.provider.embedded-port=0"
    })
@DirtiesContext // its workers stop with it rather than share the database with later classes
class FloodIT extends HttpTestSupport {

  private static final String FLOOD_TENANT = "sk_test_flood";
  private static final String ORDER =
      "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"a\",\"quantity\":1,\"unitPrice\":\"5\"}]}";

  @Autowired DataSource dataSource;

  private long orders(String tenant) {
    return jdbc.sql("select count(*) from shop_order where tenant_id = ?")
        .param(tenant)
        .query(Long.class)
        .single();
  }

  @Test
  void aSameKeyFloodAgainstASlowRequestLeavesThePoolToOthers() throws Exception {
    String key = newKey();
    long before = orders("tenant_flood");
    ExecutorService first = Executors.newSingleThreadExecutor();
    Future<HttpResponse<String>> slow;
    List<HttpResponse<String>> flood;
    List<HttpResponse<String>> others;
    // Hold the order table: the first request claims the key, then waits on its order insert,
    // its claim uncommitted, for as long as this test wants.
    try (Connection lock = dataSource.getConnection()) {
      lock.setAutoCommit(false);
      try (Statement s = lock.createStatement()) {
        s.execute("lock table shop_order in exclusive mode");
      }
      slow = first.submit(() -> post("/v1/orders", FLOOD_TENANT, key, ORDER));
      Thread.sleep(500); // the first request is in, holding its claim

      flood = race(16, i -> post("/v1/orders", FLOOD_TENANT, key, ORDER));
      others =
          race(
              4,
              i ->
                  post(
                      "/v1/payments",
                      "sk_test_others",
                      newKey(),
                      payment("flood-" + newKey(), "3.00")));

      assertThat(slow.isDone()).as("the first request is still running").isFalse();
      lock.rollback();
    }
    HttpResponse<String> firstAnswer = slow.get(30, TimeUnit.SECONDS);
    first.shutdown();

    assertThat(flood)
        .allSatisfy(
            r -> {
              assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
              assertThat(r.body()).contains("IDEMPOTENCY_REQUEST_IN_PROGRESS");
              assertThat(r.headers().firstValue("Retry-After")).isPresent();
            });
    assertThat(others).allSatisfy(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(201));
    assertThat(firstAnswer.statusCode()).isEqualTo(201);
    HttpResponse<String> retry = post("/v1/orders", FLOOD_TENANT, key, ORDER);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(firstAnswer.body());
    assertThat(orders("tenant_flood") - before).isEqualTo(1);
  }

  @Test
  void anOrderDoubleSubmittedMakesOneOrderAndAKeylessOneNone() throws Exception {
    String key = newKey();
    long before = orders("tenant_flood");

    List<HttpResponse<String>> submits = race(2, i -> post("/v1/orders", FLOOD_TENANT, key, ORDER));
    HttpResponse<String> keyless = post("/v1/orders", FLOOD_TENANT, null, ORDER);

    assertThat(orders("tenant_flood") - before).isEqualTo(1);
    assertThat(submits).extracting(HttpResponse::statusCode).allMatch(s -> s == 201 || s == 409);
    assertThat(
            submits.stream()
                .filter(r -> r.statusCode() == 201)
                .map(r -> r.headers().firstValue("Location").orElseThrow())
                .distinct())
        .hasSize(1);
    assertThat(keyless.statusCode()).isEqualTo(400);
    assertThat(keyless.body()).contains("IDEMPOTENCY_KEY_MISSING");
  }

  interface Call<T> {
    T call(int i) throws Exception;
  }

  private static <T> List<T> race(int n, Call<T> call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        Callable<T> task =
            () -> {
              go.await();
              return call.call(index);
            };
        futures.add(pool.submit(task));
      }
      go.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get(60, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }
}
