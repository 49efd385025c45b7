package dev.idemkit.spring.boot;

import dev.idemkit.Outcome;
import dev.idemkit.support.Backoff;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How a request waits for another that holds its key ({@code idemkit.in-progress-wait}): it asks
 * again after 5 ms, then twice as long each time up to 100 ms, never past the wait. A short
 * operation's answer is picked up within a few milliseconds of its commit, and a long one is asked
 * about ten times a second, not more.
 */
final class InProgressWait {

  private static final Backoff PAUSES =
      Backoff.exponential(Duration.ofMillis(5), Duration.ofMillis(100));

  private InProgressWait() {}

  /**
   * {@code outcome}, or, while it is {@link Outcome.InProgress}, what {@code askAgain} answers
   * after the next pause, until the answer is something else or {@code wait} is over since this
   * call: the last answer.
   */
  static Outcome askAgainWhileInProgress(Outcome outcome, Duration wait, Supplier<Outcome> askAgain)
      throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    for (int asked = 1; outcome instanceof Outcome.InProgress; asked++) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      TimeUnit.NANOSECONDS.sleep(Math.min(PAUSES.delay(asked).toNanos(), left));
      outcome = askAgain.get();
    }
    return outcome;
  }
}
