package dev.idemkit.spring.boot;

import dev.idemkit.outbox.InboxConsumer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs every inbox consumer's cleanup ({@link InboxConsumer#deleteProcessed}) every {@code
 * interval}: the ids it processed longer ago than its retention, and for a consumer in sequence
 * from the first message seen the aggregates idle for as long. Failed, parked and held messages are
 * never touched. The consumers are asked for at every run, so consumers started after this worker
 * (Kafka consumer groups) are cleaned too.
 *
 * <p>Every instance runs it; they share the work rather than wait for each other, because each
 * batch of a cleanup skips rows another transaction holds ({@code SKIP LOCKED}) and a row one
 * instance deleted no longer matches the other's.
 */
public class InboxCleanupWorker implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(InboxCleanupWorker.class);

  private final Supplier<List<InboxConsumer>> consumers;
  private final Duration interval;
  private volatile boolean running;
  private ScheduledExecutorService scheduler;

  /**
   * @param consumers the consumers to clean, asked for at every run
   * @param interval pause between two runs
   */
  public InboxCleanupWorker(Supplier<List<InboxConsumer>> consumers, Duration interval) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("idemkit.inbox.cleanup.interval must be positive");
    }
    this.consumers = consumers;
    this.interval = interval;
  }

  /**
   * One run, now: each consumer's cleanup in turn; one that fails (its database away) is logged and
   * tried again at the next run, and the others still run.
   *
   * @return how many processed ids were deleted, all consumers together
   */
  public long cleanUpOnce() {
    long deleted = 0;
    for (InboxConsumer consumer : consumers.get()) {
      if (Thread.currentThread().isInterrupted()) {
        break;
      }
      try {
        int n = consumer.deleteProcessed();
        if (n > 0) {
          log.debug("Inbox cleanup deleted {} processed id(s) of {}", n, consumer.consumerName());
        }
        deleted += n;
      } catch (SQLException | RuntimeException e) {
        log.warn(
            "Inbox cleanup of {} failed; the next run tries again: {}",
            consumer.consumerName(),
            e.toString());
      }
    }
    return deleted;
  }

  @Override
  public synchronized void start() {
    if (scheduler != null) {
      return;
    }
    scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "idemkit-inbox-cleanup");
              t.setDaemon(true);
              return t;
            });
    long every = interval.toMillis();
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            cleanUpOnce();
          } catch (RuntimeException e) {
            log.warn("Inbox cleanup run failed; the next one tries again: {}", e.toString());
          }
        },
        Math.min(every, Duration.ofSeconds(5).toMillis()),
        every,
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
