package dev.idemkit.spring.boot;

import dev.idemkit.outbox.InboxConsumer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
public class InboxCleanupWorker extends PollingLifecycle {

  private static final Logger log = LoggerFactory.getLogger(InboxCleanupWorker.class);

  private final Supplier<List<InboxConsumer>> consumers;

  /**
   * @param consumers the consumers to clean, asked for at every run
   * @param interval pause between two runs
   */
  public InboxCleanupWorker(Supplier<List<InboxConsumer>> consumers, Duration interval) {
    super("idemkit-inbox-cleanup", firstRunAfter(positive(interval)), interval);
    this.consumers = consumers;
  }

  private static Duration positive(Duration interval) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("idemkit.inbox.cleanup.interval must be positive");
    }
    return interval;
  }

  @Override
  void runOnce() {
    cleanUpOnce();
  }

  @Override
  String failedRun() {
    return "Inbox cleanup run failed";
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
}
