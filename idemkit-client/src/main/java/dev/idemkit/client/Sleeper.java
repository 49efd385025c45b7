package dev.idemkit.client;

import java.time.Duration;

/**
 * Waits between attempts. The client's seam for time: tests inject a sleeper that records the waits
 * (and moves a test {@link java.time.Clock} forward) instead of sleeping.
 */
@FunctionalInterface
public interface Sleeper {

  /**
   * Waits for the given time.
   *
   * @param duration how long, zero or positive
   * @throws InterruptedException if the thread is interrupted while waiting
   */
  void sleep(Duration duration) throws InterruptedException;

  /**
   * The real thing: {@link Thread#sleep(long, int)}.
   *
   * @return a sleeper that sleeps
   */
  static Sleeper system() {
    return d -> {
      if (!d.isZero() && !d.isNegative()) {
        Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
      }
    };
  }
}
