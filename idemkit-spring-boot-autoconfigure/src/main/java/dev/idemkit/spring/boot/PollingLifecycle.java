package dev.idemkit.spring.boot;

import dev.idemkit.support.PollingWorker;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * A background worker of the starter, as a Spring lifecycle on the core's {@link PollingWorker}:
 * one daemon thread that runs {@link #runOnce()} with a fixed pause between runs, from {@link
 * #start()} to {@link #stop()}. A run that fails is logged at WARN and the next run tries again
 * after the same pause; stopping interrupts a run under way and waits for it to end (at most the
 * worker's stop timeout).
 */
abstract class PollingLifecycle implements SmartLifecycle {

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final PollingWorker worker;

  /**
   * @param threadName the worker thread's name
   * @param firstRunAfter the delay before the first run
   * @param interval the pause between two runs (positive)
   */
  PollingLifecycle(String threadName, Duration firstRunAfter, Duration interval) {
    this.worker =
        PollingWorker.named(threadName)
            .firstPollAfter(firstRunAfter)
            .poll(
                () -> {
                  runOnce();
                  return interval;
                })
            .afterFailure(
                e -> {
                  log.warn("{}; the next run tries again: {}", failedRun(), e.toString());
                  return interval;
                })
            .build();
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
  public void start() {
    worker.start();
  }

  @Override
  public void stop() {
    worker.stop();
  }

  @Override
  public boolean isRunning() {
    return worker.running();
  }
}
