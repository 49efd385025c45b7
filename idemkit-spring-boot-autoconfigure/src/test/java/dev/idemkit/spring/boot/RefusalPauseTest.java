package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The pause before a quota's refusal: how long it is, which refusals take it, and that no more than
 * the configured number of one tenant's refusals wait at once, raced by real threads.
 */
class RefusalPauseTest {

  private final List<Duration> slept = new CopyOnWriteArrayList<>();

  @Test
  void aRefusalWaitsThePauseButNeverLongerThanItsRetryAfter() {
    RefusalPause pause = new RefusalPause(Duration.ofSeconds(1), 4, slept::add);

    assertThat(pause.before("t", "new_keys", Duration.ofSeconds(30)))
        .isEqualTo(Duration.ofSeconds(1));
    assertThat(pause.before("t", "live_records", Duration.ofMillis(400)))
        .isEqualTo(Duration.ofMillis(400));
    assertThat(slept).containsExactly(Duration.ofSeconds(1), Duration.ofMillis(400));
  }

  @Test
  void theBulkheadsRefusalsAndAZeroPauseAreAnsweredAtOnce() {
    RefusalPause pause = new RefusalPause(Duration.ofSeconds(1), 4, slept::add);
    assertThat(pause.before("t", "concurrent_requests", Duration.ofSeconds(1)))
        .isEqualTo(Duration.ZERO);
    assertThat(
            new RefusalPause(Duration.ZERO, 4, slept::add)
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
            p -> {
              asleep.countDown();
              wake.await(30, TimeUnit.SECONDS);
            });
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<Duration>> waiting = new java.util.ArrayList<>();
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
    assertThatThrownBy(() -> new RefusalPause(Duration.ofSeconds(-1), 4, slept::add))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("idemkit.quota.refusal-pause");
  }
}
