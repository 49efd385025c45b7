package dev.idemkit;

import dev.idemkit.support.Backoff;
import java.time.Duration;
import java.util.Objects;

/**
 * When an outcome that stays unknown is tried again, and when it is left to an operator: the
 * record's schedule, whoever makes the attempt (a client's retry or a recovery worker).
 *
 * <p>Attempts count the first request's. The first recovery attempt is due at once; after the
 * {@code n}th attempt ({@code n} ≥ 2) the next waits {@code firstDelay * 2^(n-2)}, at most {@code
 * maxDelay}: with the defaults of the Spring Boot starter (10 s, 1 h, 8 attempts) at once, then
 * after 10 s, 20 s, 40 s … and, about 10.5 minutes after the first request, escalated. Meanwhile a
 * retry is answered {@link Outcome.OutcomePending} with the time left as its {@code Retry-After},
 * so retries that follow it cannot use up the attempts faster than the schedule.
 *
 * @param firstDelay the wait after the first recovery attempt; positive
 * @param maxDelay the longest wait between two attempts; at least {@code firstDelay}
 * @param maxAttempts attempts after which the record is escalated to an operator; at least 1
 */
public record RecoverySchedule(Duration firstDelay, Duration maxDelay, int maxAttempts) {

  public RecoverySchedule {
    Objects.requireNonNull(firstDelay, "firstDelay");
    Objects.requireNonNull(maxDelay, "maxDelay");
    if (firstDelay.isNegative() || firstDelay.isZero()) {
      throw new IllegalArgumentException("firstDelay must be positive: " + firstDelay);
    }
    if (maxDelay.compareTo(firstDelay) < 0) {
      throw new IllegalArgumentException(
          "maxDelay (" + maxDelay + ") must be at least firstDelay (" + firstDelay + ")");
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
    }
  }

  /**
   * The wait after the {@code attempts}th attempt left the outcome unknown: {@code firstDelay} up
   * to the second attempt, then doubling with each attempt, at most {@code maxDelay} ({@link
   * Backoff}'s, counted from the second attempt).
   */
  public Duration delayAfter(int attempts) {
    return Backoff.exponential(firstDelay, maxDelay).delay(Math.max(attempts, 1) - 1);
  }
}
