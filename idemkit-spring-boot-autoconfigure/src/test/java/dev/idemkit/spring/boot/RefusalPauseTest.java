package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The pause before a quota's refusal: how long it is, which refusals take it, and that no more than
 * the configured number of one tenant's refusals wait at once, raced by real threads; parked
 * refusals answered after the pause by the pause's own thread, never sooner, and all of them at
 * once when it closes.
 */
class RefusalPauseTest {

  private final List<Duration> slept = new CopyOnWriteArrayList<>();

  @Test
  void aRefusalWaitsThePauseButNeverLongerThanItsRetryAfter() {
    RefusalPause pause = new RefusalPause(Duration.ofSeconds(1), 4, 4, slept::add);

    assertThat(pause.before("t", "new_keys", Duration.ofSeconds(30)))
        .isEqualTo(Duration.ofSeconds(1));
    assertThat(pause.before("t", "live_records", Duration.ofMillis(400)))
        .isEqualTo(Duration.ofMillis(400));
    assertThat(slept).containsExactly(Duration.ofSeconds(1), Duration.ofMillis(400));
  }

  @Test
  void theBulkheadsRefusalsAndAZeroPauseAreAnsweredAtOnce() {
    RefusalPause pause = new RefusalPause(Duration.ofSeconds(1), 4, 4, slept::add);
    assertThat(pause.before("t", "concurrent_requests", Duration.ofSeconds(1)))
        .isEqualTo(Duration.ZERO);
    assertThat(
            new RefusalPause(Duration.ZERO, 4, 4, slept::add)
                .before("t", "new_keys", Duration.ofSeconds(30)))
        .isEqualTo(Duration.ZERO);
    assertThat(slept).isEmpty();
  }

  @Test
  void atMostTheConfiguredNumberOfOneTenantsRefusalsWaitAtOnce() throws Exception {
    CountDownLatch asleep = new CountDownLatch(3);
    CountDownLatch wake = new CountDownLatch(1);
    RefusalPause pause =
        new RefusalPause(
            Duration.ofSeconds(1),
            3,
            3,
            p -> {
              asleep.countDown();
              wake.await(30, TimeUnit.SECONDS);
            });
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<Duration>> waiting = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        waiting.add(
            threads.submit(() -> pause.before("flooder", "new_keys", Duration.ofSeconds(30))));
      }
      assertThat(asleep.await(30, TimeUnit.SECONDS)).as("three refusals waiting").isTrue();

      // A fourth of the same tenant is answered at once; another tenant still waits.
      assertThat(pause.before("flooder", "new_keys", Duration.ofSeconds(30)))
          .isEqualTo(Duration.ZERO);
      Future<Duration> other =
          threads.submit(() -> pause.before("other", "new_keys", Duration.ofSeconds(30)));
      wake.countDown();
      assertThat(other.get(30, TimeUnit.SECONDS)).isEqualTo(Duration.ofSeconds(1));
      for (Future<Duration> w : waiting) {
        assertThat(w.get(30, TimeUnit.SECONDS)).isEqualTo(Duration.ofSeconds(1));
      }
      // Their places are free again.
      assertThat(pause.before("flooder", "new_keys", Duration.ofSeconds(30)))
          .isEqualTo(Duration.ofSeconds(1));
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aNegativeSettingStopsTheStart() {
    assertThatThrownBy(() -> new RefusalPause(Duration.ofSeconds(-1), 4, 4, slept::add))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("idemkit.quota.refusal-pause");
  }

  @Test
  void aParkedRefusalIsAnsweredAfterThePauseByAnotherThread() throws Exception {
    try (RefusalPause pause = new RefusalPause(Duration.ofMillis(300), 4, 2, slept::add)) {
      CountDownLatch answered = new CountDownLatch(1);
      AtomicLong answeredAfter = new AtomicLong();
      AtomicReference<Thread> answeredOn = new AtomicReference<>();
      long parkedAt = System.nanoTime();
      assertThat(
              pause.later(
                  "t",
                  "requests_per_second",
                  Duration.ofSeconds(1),
                  () -> {
                    answeredAfter.set(System.nanoTime() - parkedAt);
                    answeredOn.set(Thread.currentThread());
                    answered.countDown();
                  }))
          .isTrue();
      assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(answeredAfter.get()).isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());
      assertThat(answeredOn.get()).isNotSameAs(Thread.currentThread());
      assertThat(slept).as("no request thread slept").isEmpty();
    }
  }

  @Test
  void atMostTheConfiguredNumberOfOneTenantsRefusalsAreParkedAndClosingAnswersThem()
      throws Exception {
    RefusalPause pause = new RefusalPause(Duration.ofSeconds(30), 1, 3, slept::add);
    int racers = 8;
    ExecutorService threads = Executors.newFixedThreadPool(racers);
    CountDownLatch go = new CountDownLatch(1);
    AtomicInteger answered = new AtomicInteger();
    try {
      List<Future<Boolean>> parkedEach = new ArrayList<>();
      for (int i = 0; i < racers; i++) {
        parkedEach.add(
            threads.submit(
                () -> {
                  go.await();
                  return pause.later(
                      "flooder",
                      "requests_per_second",
                      Duration.ofSeconds(30),
                      answered::incrementAndGet);
                }));
      }
      go.countDown();
      int parked = 0;
      for (Future<Boolean> p : parkedEach) {
        parked += p.get(30, TimeUnit.SECONDS) ? 1 : 0;
      }
      assertThat(parked).as("parked of 8 racing refusals").isEqualTo(3);
      assertThat(answered.get()).as("answered before the pause").isZero();
      // Another tenant has its own places; the bulkhead's refusals are never parked.
      assertThat(pause.later("other", "requests_per_second", Duration.ofSeconds(30), () -> {}))
          .isTrue();
      assertThat(pause.later("t", "concurrent_requests", Duration.ofSeconds(30), () -> {}))
          .isFalse();

      pause.close();
      assertThat(answered.get()).as("answered when the pause closes").isEqualTo(3);
      // Closed: answered at once, still counted as handled.
      assertThat(
              pause.later(
                  "flooder",
                  "requests_per_second",
                  Duration.ofSeconds(30),
                  answered::incrementAndGet))
          .isTrue();
      assertThat(answered.get()).isEqualTo(4);
    } finally {
      threads.shutdownNow();
      pause.close();
    }
  }

  @Test
  void aTenantsParkedRefusalsAreAnsweredInTurnAtMostTheLimitAPause() throws Exception {
    // 4 a pause of 400 ms: one every 100 ms, however many connections they came on.
    try (RefusalPause pause = new RefusalPause(Duration.ofMillis(400), 4, 64, slept::add)) {
      int parked = 12;
      CountDownLatch answered = new CountDownLatch(parked + 1);
      List<Long> answeredAt = new CopyOnWriteArrayList<>();
      long start = System.nanoTime();
      for (int i = 0; i < parked; i++) {
        assertThat(
                pause.later(
                    "flooder",
                    "requests_per_second",
                    Duration.ofSeconds(1),
                    () -> {
                      answeredAt.add(System.nanoTime() - start);
                      answered.countDown();
                    }))
            .isTrue();
      }
      long otherAt = System.nanoTime();
      AtomicLong otherAfter = new AtomicLong();
      pause.later(
          "other",
          "requests_per_second",
          Duration.ofSeconds(1),
          () -> {
            otherAfter.set(System.nanoTime() - otherAt);
            answered.countDown();
          });
      assertThat(answered.await(30, TimeUnit.SECONDS)).isTrue();

      List<Long> sorted = answeredAt.stream().sorted().toList();
      for (int i = 0; i < parked; i++) {
        assertThat(sorted.get(i))
            .as("answer %d of the flooder's, in ns", i + 1)
            .isGreaterThanOrEqualTo(Duration.ofMillis(400 + 100L * i).toNanos());
      }
      assertThat(otherAfter.get())
          .as("another tenant waits its own pause only, in ns")
          .isBetween(Duration.ofMillis(400).toNanos(), Duration.ofMillis(1000).toNanos());
      assertThat(pause.longestParkedWait()).isEqualTo(Duration.ofMillis(400 * (64 / 4 + 2)));
    }
  }
}
