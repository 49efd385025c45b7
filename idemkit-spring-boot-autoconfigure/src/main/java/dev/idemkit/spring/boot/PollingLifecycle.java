package dev.idemkit.spring.boot;

import dev.idemkit.support.PollingWorker;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * A background worker of the starter, as a Spring lifecycle on the core's {@link PollingWorker}:
 * one daemon thread that runs {@link #runOnce()} with a fixed pause between runs, from {@link
 * #start()} to {@link #stop()}. A run that fails is logged at WARN and the next run tries again
 * after the same pause; stopping interrupts a run under way and waits for it to end (at most the
 * worker's stop timeout). With tenants on shards, {@link #runPerShard} gives it one lane per shard
 * (the shard's pool names itself in a failure's message: {@code idemkit-shard-<name>}).
 */
abstract class PollingLifecycle implements SmartLifecycle {

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final String threadName;
  private final Duration firstRunAfter;
  private final Duration interval;

  /** Null for a worker with no shard to run on. */
  private volatile PollingWorker worker;

  /**
   * @param threadName the worker thread's name
   * @param firstRunAfter the delay before the first run
   * @param interval the pause between two runs (positive)
   */
  PollingLifecycle(String threadName, Duration firstRunAfter, Duration interval) {
    this.threadName = threadName;
    this.firstRunAfter = firstRunAfter;
    this.interval = interval;
    this.worker = worker("", PollingWorker.named(threadName).poll(this::run));
  }

  /**
   * Runs one lane per shard of {@code names} instead of the one lane, each run bound to its shard
   * ({@link TenantShards#on(String, java.util.concurrent.Callable)}), so a shard that is down fails
   * only its own lane's runs. With no shard (an instance of a region that holds none) it never
   * runs. Called before {@link #start()}.
   */
  void runPerShard(TenantShards shards, List<String> names) {
    if (names.isEmpty()) {
      this.worker = null;
      return;
    }
    this.worker =
        worker(
            " (a lane of shards " + String.join(", ", names) + ")",
            PollingWorker.named(threadName + "-per-shard")
                .lanes(names.size(), i -> () -> shards.on(names.get(i), this::run)));
  }

  /** One run; answers the pause before the next. */
  private Duration run() throws InterruptedException {
    runOnce();
    return interval;
  }

  /** {@code where}: what a failed run's WARN line adds to {@link #failedRun()}. */
  private PollingWorker worker(String where, PollingWorker.Builder builder) {
    return builder
        .firstPollAfter(firstRunAfter)
        .afterFailure(
            e -> {
              log.warn("{}{}; the next run tries again: {}", failedRun(), where, e.toString());
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
    if (worker != null) {
      worker.start();
    }
  }

  @Override
  public void stop() {
    if (worker != null) {
      worker.stop();
    }
  }

  @Override
  public boolean isRunning() {
    return worker != null && worker.running();
  }
}
