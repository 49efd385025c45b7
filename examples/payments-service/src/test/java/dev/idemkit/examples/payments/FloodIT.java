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
      "idemkit.claim-wait=PT3S",
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
    long floodTook;
    long othersTook;
    // The other tenant's path warmed, so that its timing below is the pool's, not the JIT's.
    assertThat(
            post("/v1/payments", "sk_test_others", newKey(), payment("flood-" + newKey(), "3.00"))
                .statusCode())
        .isEqualTo(201);
    // Hold the order table: the first request claims the key, then waits on its order insert,
    // its claim uncommitted, for as long as this test wants.
    try (Connection lock = dataSource.getConnection()) {
      lock.setAutoCommit(false);
      try (Statement s = lock.createStatement()) {
        s.execute("lock table shop_order in exclusive mode");
      }
      slow = first.submit(() -> post("/v1/orders", FLOOD_TENANT, key, ORDER));
      Thread.sleep(500); // the first request is in, holding its claim

      // The flood and the other tenant's payments released together: the others are served while
      // the flood is in flight, not after it.
      List<Timed> all =
          race(
              20,
              i ->
                  i < 16
                      ? post("/v1/orders", FLOOD_TENANT, key, ORDER)
                      : post(
                          "/v1/payments",
                          "sk_test_others",
                          newKey(),
                          payment("flood-" + newKey(), "3.00")));
      flood = all.subList(0, 16).stream().map(Timed::answer).toList();
      others = all.subList(16, 20).stream().map(Timed::answer).toList();
      floodTook = all.subList(0, 16).stream().mapToLong(Timed::millis).max().orElseThrow();
      othersTook = all.subList(16, 20).stream().mapToLong(Timed::millis).max().orElseThrow();

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
    // The flood (twice the pool) lasts at least the claim wait (3 s) of the request that waits on
    // the first's claim; the others, released with it, are served in a fraction of that.
    assertThat(floodTook)
        .as("the flood waits on the first request's claim")
        .isGreaterThanOrEqualTo(3000);
    assertThat(othersTook)
        .as("the others, served during a flood of %d ms", floodTook)
        .isLessThan(floodTook / 2);
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

    List<HttpResponse<String>> submits =
        race(2, i -> post("/v1/orders", FLOOD_TENANT, key, ORDER)).stream()
            .map(Timed::answer)
            .toList();
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

  /** An answer and how long after the common start it came. */
  record Timed(HttpResponse<String> answer, long millis) {}

  private static List<Timed> race(int n, Call<HttpResponse<String>> call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch ready = new CountDownLatch(n);
      CountDownLatch go = new CountDownLatch(1);
      long[] start = new long[1];
      List<Future<Timed>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        Callable<Timed> task =
            () -> {
              ready.countDown();
              go.await();
              HttpResponse<String> answer = call.call(index);
              return new Timed(answer, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start[0]));
            };
        futures.add(pool.submit(task));
      }
      ready.await();
      start[0] = System.nanoTime();
      go.countDown();
      List<Timed> results = new ArrayList<>();
      for (Future<Timed> f : futures) {
        results.add(f.get(60, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }
}
