package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Shares this instance's quota counts with the other instances every {@code interval} ({@link
 * Idempotency#syncQuotas()}: one transaction that writes this instance's rows and reads the
 * others'). Requests never wait for it: they are admitted in memory against the counts of the last
 * exchange, so a failed exchange only makes the next one's counts older (the overshoot across
 * instances grows with the time since the last exchange, see docs/contract.md).
 *
 * <p>Every instance runs it, like the cleanup and recovery workers; it runs only while quotas are
 * configured.
 */
public class IdempotencyQuotaWorker implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(IdempotencyQuotaWorker.class);

  private final Idempotency idempotency;
  private final Duration interval;
  private volatile boolean running;
  private ScheduledExecutorService scheduler;

  public IdempotencyQuotaWorker(Idempotency idempotency, Duration interval) {
    if (interval == null || interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException(
          "idemkit.quota.sync-interval must be positive: " + interval);
    }
    this.idempotency = idempotency;
    this.interval = interval;
  }

  /** One exchange, now. */
  public void syncOnce() {
    idempotency.syncQuotas();
  }

  @Override
  public synchronized void start() {
    if (scheduler != null) {
      return;
    }
    scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "idemkit-quota");
              t.setDaemon(true);
              return t;
            });
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            syncOnce();
          } catch (RuntimeException e) {
            log.warn(
                "Quota counts not exchanged; admissions go on with the last ones, the next"
                    + " exchange tries again: {}",
                e.toString());
          }
        },
        0,
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
