package dev.idemkit.spring.boot;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * A background worker of the starter: one daemon thread that runs {@link #runOnce()} with a fixed
 * pause between runs, from {@link #start()} to {@link #stop()}. A run that fails is logged at WARN
 * and the next run tries again; stopping interrupts a run under way.
 */
abstract class PeriodicWorker implements SmartLifecycle {

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final String threadName;
  private final Duration firstRunAfter;
  private final Duration interval;
  private volatile boolean running;
  private ScheduledExecutorService scheduler;

  /**
   * @param threadName the worker thread's name
   * @param firstRunAfter the delay before the first run
   * @param interval the pause between two runs (positive)
   */
  PeriodicWorker(String threadName, Duration firstRunAfter, Duration interval) {
    this.threadName = threadName;
    this.firstRunAfter = firstRunAfter;
    this.interval = interval;
  }

  /** The first run within 5 s of the start, or after one interval if that is shorter. */
  static Duration firstRunAfter(Duration interval) {
    return interval.compareTo(Duration.ofSeconds(5)) < 0 ? interval : Duration.ofSeconds(5);
  }

  /** One run, on the worker's thread. */
  abstract void runOnce() throws InterruptedException;

  /** What a failed run's WARN line says before the failure (e.g. "Cleanup run failed"). */
  abstract String failedRun();

  @Override
  public synchronized void start() {
    if (scheduler != null) {
      return;
    }
    scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            runOnce();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (RuntimeException e) {
            log.warn("{}; the next run tries again: {}", failedRun(), e.toString());
          }
        },
        firstRunAfter.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
    running = true;
  }

  @Override
  public synchronized void stop() {
    if (scheduler != null) {
      scheduler.shutdownNow();
      scheduler = null;
    }
    running = false;
  }

  @Override
  public boolean isRunning() {
    return running;
  }
}
