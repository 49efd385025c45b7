package dev.idemkit.bench;

import dev.idemkit.bench.HttpFigures.Cpu;
import dev.idemkit.bench.HttpFigures.Errors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** What one phase of {@code bench/flood} measured ({@link FloodBenchmark}). */
final class FloodPhase {

  final String name;
  double seconds;
  long[] othersNanos = new long[0];

  /** The others' latencies of requests due before and after the flooder's first 429. */
  long[] othersBeforeRefusalNanos = new long[0];

  long[] othersAfterRefusalNanos = new long[0];

  /** When the flooder got its first 429 ({@link System#nanoTime}); none: {@code MAX_VALUE}. */
  final AtomicLong firstRefusal = new AtomicLong(Long.MAX_VALUE);

  final Errors errors = new Errors();
  final LongAdder admitted = new LongAdder();
  final LongAdder refused = new LongAdder();

  /**
   * The flooder's requests refused by the bulkhead or the rate limit ({@link FloodTraffic#isBusy}).
   */
  final LongAdder busy = new LongAdder();

  Cpu cpu = Cpu.ZERO;

  FloodPhase(String name) {
    this.name = name;
  }

  long floodSent() {
    return admitted.sum() + refused.sum() + busy.sum();
  }

  double othersP99() {
    return percentile(0.99);
  }

  double percentile(double p) {
    return percentile(othersNanos, p);
  }

  static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
  }

  void print() {
    System.out.printf(
        "%-12s %7.1f  %13.1f  %7.2f  %7.2f  %6.1f   %14.0f  %5.0f  %5.0f   %5.0f   %.2f / %.2f / %.2f%n",
        name,
        seconds,
        othersNanos.length / seconds,
        percentile(0.50) / 1e6,
        percentile(0.99) / 1e6,
        (othersNanos.length == 0 ? 0 : othersNanos[othersNanos.length - 1]) / 1e6,
        floodSent() / seconds,
        admitted.sum() / seconds,
        refused.sum() / seconds,
        busy.sum() / seconds,
        cpu.driverNanos() / 1e9 / seconds,
        cpu.serviceNanos() / 1e9 / seconds,
        cpu.postgresNanos() / 1e9 / seconds);
  }
}
