package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Outcome;
import dev.idemkit.StoredResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class InProgressWaitTest {

  private static final Outcome IN_PROGRESS = new Outcome.InProgress(Duration.ofSeconds(1));

  @Test
  void answersTheFirstOutcomeThatIsNotInProgressSoonAfterItCame() throws Exception {
    Outcome done = new Outcome.Executed(StoredResponse.of(201, Map.of(), new byte[0]));
    AtomicInteger asked = new AtomicInteger();
    long started = System.nanoTime();

    Outcome answered =
        InProgressWait.askAgainWhileInProgress(
            IN_PROGRESS,
            Duration.ofSeconds(10),
            () -> asked.incrementAndGet() < 3 ? IN_PROGRESS : done);

    assertThat(answered).isSameAs(done);
    assertThat(asked).hasValue(3);
    // Pauses of 5, 10 and 20 ms.
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
  }

  @Test
  void asksNoLongerThanTheWaitAndLessOftenAsItGoesOn() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    long started = System.nanoTime();

    Outcome answered =
        InProgressWait.askAgainWhileInProgress(
            IN_PROGRESS,
            Duration.ofMillis(400),
            () -> {
              asked.incrementAndGet();
              return IN_PROGRESS;
            });

    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertThat(answered).isSameAs(IN_PROGRESS);
    assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(400));
    assertThat(took).isLessThan(Duration.ofMillis(400 + 300));
    // Pauses of 5, 10, 20, 40, 80, 100 and 100 ms, then what is left: at most 9 asks.
    assertThat(asked.get()).isBetween(2, 9);
  }

  @Test
  void withNoWaitAsksNothingMore() throws Exception {
    Outcome answered =
        InProgressWait.askAgainWhileInProgress(
            IN_PROGRESS,
            Duration.ZERO,
            () -> {
              throw new AssertionError("asked again");
            });

    assertThat(answered).isSameAs(IN_PROGRESS);
  }
}
