package dev.idemkit.internal;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each operation recently took to run to its answer, in memory: the last {@value #SIZE}
 * runs per operation. It answers how long a retry that found the first request still running should
 * wait ({@code Retry-After}): the 90th percentile of those runs, at least one second and never more
 * than what is left of the running owner's lease. With no run seen yet (a fresh process) it says
 * one second: a retry that comes back too early gets another in-progress answer, with a better
 * figure.
 *
 * <p>Thread-safe: each operation's ring is updated and read under its own monitor, so requests of
 * different operations never wait for each other, and a read sees whole samples.
 */
final class RecentDurations {

  static final int SIZE = 64;

  private static final Duration MIN = Duration.ofSeconds(1);

  private final Map<String, Ring> rings = new ConcurrentHashMap<>();

  /** One run of {@code operation} got its answer after {@code elapsed}. */
  void record(String operation, Duration elapsed) {
    rings.computeIfAbsent(operation, o -> new Ring()).add(elapsed.toNanos());
  }

  /**
   * What a retry of {@code operation} should wait, in whole seconds: what the operation usually
   * takes, between one second and {@code leaseLeft} (rounded up).
   */
  Duration retryAfter(String operation, Duration leaseLeft) {
    return retryAfter(operation, leaseLeft, Duration.ZERO);
  }

  /**
   * The same for an owner that has held the record for {@code runningFor} since its lease was last
   * set: once it has run longer than the operation usually takes, the wait is as long again as it
   * has run. An owner that died (its lease still running, nobody can take over before it ends) then
   * gets retries at about 1, 2, 4, 8 … seconds, which reach the end of a 30-second lease in a
   * handful of attempts instead of using a client's attempts up at one a second; a slow owner that
   * is alive is asked again at the same pace.
   */
  Duration retryAfter(String operation, Duration leaseLeft, Duration runningFor) {
    Ring ring = rings.get(operation);
    long typicalNanos = ring == null ? 0 : ring.percentile(0.9);
    long seconds = Math.max(1, ceilSeconds(Math.max(typicalNanos, runningFor.toNanos())));
    long leaseSeconds = Math.max(MIN.toSeconds(), ceilSeconds(leaseLeft.toNanos()));
    return Duration.ofSeconds(Math.min(seconds, leaseSeconds));
  }

  private static long ceilSeconds(long nanos) {
    return nanos <= 0 ? 0 : (nanos + 999_999_999L) / 1_000_000_000L;
  }

  private static final class Ring {
    private final long[] nanos = new long[SIZE];
    private int count;
    private int next;

    synchronized void add(long value) {
      nanos[next] = value;
      next = (next + 1) % SIZE;
      count = Math.min(count + 1, SIZE);
    }

    synchronized long percentile(double p) {
      if (count == 0) {
        return 0;
      }
      long[] sorted = Arrays.copyOf(nanos, count);
      Arrays.sort(sorted);
      int index = (int) Math.ceil(p * count) - 1;
      return sorted[Math.max(0, Math.min(count - 1, index))];
    }
  }
}
