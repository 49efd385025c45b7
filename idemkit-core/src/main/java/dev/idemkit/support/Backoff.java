package dev.idemkit.support;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The wait before a retry: the initial delay after the first failure, doubling with each failure
 * after it, never above the cap; optionally spread by jitter. Idemkit's one computation of a retry
 * delay (a {@link dev.idemkit.RecoverySchedule}'s waits, the outbox relay's events, the delivery
 * sender's deliveries, a Kafka consumer's partitions, the starter's wait for a request in
 * progress), so a change to retry timing is made here once.
 *
 * <p>Immutable and thread-safe (the jitter's {@link RandomGenerator} must be, if it is shared). The
 * bounds are not checked here: the builders that take them refuse bad ones with a message naming
 * their part and setting.
 */
public final class Backoff {

  private final Duration initial;
  private final Duration max;
  private final double jitter;
  private final RandomGenerator random;

  private Backoff(Duration initial, Duration max, double jitter, RandomGenerator random) {
    this.initial = Objects.requireNonNull(initial, "initial");
    this.max = Objects.requireNonNull(max, "max");
    this.jitter = jitter;
    this.random = random;
  }

  /** Doubling from {@code initial} after each failure, capped at {@code max}; no jitter. */
  public static Backoff exponential(Duration initial, Duration max) {
    return new Backoff(initial, max, 0, null);
  }

  /**
   * This backoff with each delay drawn uniformly between {@code (1 - fraction)} times it and it:
   * retries of many failures at once spread out instead of meeting again. {@code random} is
   * injected so that a test can fix the draw.
   *
   * @param fraction from 0 (no jitter) to 1 (anywhere between zero and the delay)
   */
  public Backoff withJitter(double fraction, RandomGenerator random) {
    if (!(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException("jitter must be between 0 and 1, was " + fraction);
    }
    return new Backoff(initial, max, fraction, Objects.requireNonNull(random, "random"));
  }

  /**
   * The wait after the {@code failures}-th failure in a row (1 for the first; anything below 1
   * counts as 1): the initial delay doubled {@code failures - 1} times, at most the cap.
   */
  public Duration delay(int failures) {
    Duration d = initial;
    for (int i = 1; i < failures && d.compareTo(max) < 0 && !d.isZero(); i++) {
      d = d.multipliedBy(2);
    }
    if (d.compareTo(max) > 0) {
      d = max;
    }
    if (jitter == 0) {
      return d;
    }
    return Duration.ofNanos((long) (d.toNanos() * (1 - jitter * random.nextDouble())));
  }
}
