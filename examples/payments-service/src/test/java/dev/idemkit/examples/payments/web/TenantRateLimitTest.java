package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The gate's rate limit per tenant: a second's worth at once, then the rate; tenants apart; and,
 * raced by real threads on one tenant, exactly the tokens there are admitted.
 */
class TenantRateLimitTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  @Test
  void aTenantGetsOneSecondsWorthAtOnceThenTheRate() {
    TenantRateLimit limit = new TenantRateLimit(4, now::get);

    assertThat(admitted(limit, "a", 10)).isEqualTo(4);
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
    assertThat(admitted(limit, "a", 10)).as("half a second refills two").isEqualTo(2);
    now.addAndGet(TimeUnit.SECONDS.toNanos(30));
    assertThat(admitted(limit, "a", 10)).as("a quiet spell saves one second's worth").isEqualTo(4);
    assertThat(admitted(limit, "b", 10)).as("another tenant has its own").isEqualTo(4);
  }

  @Test
  void refusedRequestsTakeNoToken() {
    TenantRateLimit limit = new TenantRateLimit(2, now::get);
    assertThat(admitted(limit, "a", 2)).isEqualTo(2);
    for (int i = 0; i < 4; i++) {
      now.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
      assertThat(limit.allows("a")).as("%d ms later", 100 * (i + 1)).isFalse();
    }
    // 550 ms at 2 a second: one token, however many refusals came meanwhile.
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(150));
    assertThat(admitted(limit, "a", 5)).isEqualTo(1);
  }

  @Test
  void zeroTurnsTheLimitOff() {
    TenantRateLimit limit = new TenantRateLimit(0, now::get);
    assertThat(admitted(limit, "a", 1000)).isEqualTo(1000);
    assertThat(limit.perSecond()).isZero();
  }

  @Test
  void racingThreadsOfOneTenantAreAdmittedExactlyTheTokensThereAre() throws Exception {
    TenantRateLimit limit = new TenantRateLimit(25, now::get);
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<Integer>> counts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        counts.add(
            pool.submit(
                () -> {
                  start.await();
                  return admitted(limit, "flooder", 100);
                }));
      }
      start.countDown();
      int total = 0;
      for (Future<Integer> c : counts) {
        total += c.get(30, TimeUnit.SECONDS);
      }
      assertThat(total).as("800 requests on a frozen clock").isEqualTo(25);
    } finally {
      pool.shutdownNow();
    }
  }

  private static int admitted(TenantRateLimit limit, String tenant, int requests) {
    int admitted = 0;
    for (int i = 0; i < requests; i++) {
      if (limit.allows(tenant)) {
        admitted++;
      }
    }
    return admitted;
  }
}
