package dev.idemkit.chaos;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What a running run says on standard error, each line starting {@code chaos:}, so that a run of
 * minutes is not silent until its summary: its stages, and every {@link #EVERY} while the clients
 * run, how far they got.
 */
final class Progress {

  /** How often a running run says how far it got. */
  static final Duration EVERY = Duration.ofSeconds(10);

  private Progress() {}

  /** A line on standard error. */
  static void say(String what) {
    System.err.println("chaos: " + what);
  }

  /**
   * Says every {@link #EVERY} how far the clients got, from {@code begun} (a {@link
   * System#nanoTime()}) until the answer is shut down.
   */
  static ScheduledExecutorService ticker(
      long begun, Duration duration, History history, Nemesis nemesis) {
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
    ticker.scheduleAtFixedRate(
        () ->
            say(
                line(
                    Duration.ofNanos(System.nanoTime() - begun), duration, history.ops(), nemesis)),
        EVERY.toSeconds(),
        EVERY.toSeconds(),
        TimeUnit.SECONDS);
    return ticker;
  }

  /**
   * Where the clients are: time run of the duration, the operations answered so far by outcome and
   * those still running, and what the nemesis did.
   */
  static String line(Duration elapsed, Duration duration, List<History.Op> ops, Nemesis nemesis) {
    int invoked = 0;
    int ok = 0;
    int fail = 0;
    int info = 0;
    for (History.Op op : ops) {
      if (!(op.process() instanceof Integer)) {
        continue;
      }
      switch (op.type()) {
        case "invoke" -> invoked++;
        case "ok" -> ok++;
        case "fail" -> fail++;
        default -> info++;
      }
    }
    int answered = ok + fail + info;
    return String.format(
        Locale.ROOT,
        "%d s of %d s: %d operations answered (ok %d, fail %d, info %d), %d running; nemesis: %s",
        Math.min(elapsed.toSeconds(), duration.toSeconds()),
        duration.toSeconds(),
        answered,
        ok,
        fail,
        info,
        invoked - answered,
        Report.nemesis(nemesis.counts(), nemesis.actions()));
  }
}
