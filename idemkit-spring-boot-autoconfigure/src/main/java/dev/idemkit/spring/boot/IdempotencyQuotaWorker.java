package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import java.time.Duration;

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
public class IdempotencyQuotaWorker extends PollingLifecycle {

  private final Idempotency idempotency;

  public IdempotencyQuotaWorker(Idempotency idempotency, Duration interval) {
    super("idemkit-quota", Duration.ZERO, positive(interval));
    this.idempotency = idempotency;
  }

  private static Duration positive(Duration interval) {
    if (interval == null || interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException(
          "idemkit.quota.sync-interval must be positive: " + interval);
    }
    return interval;
  }

  /** One exchange, now. */
  public void syncOnce() {
    idempotency.syncQuotas();
  }

  @Override
  void runOnce() {
    syncOnce();
  }

  @Override
  String failedRun() {
    return "Quota counts not exchanged; admissions go on with the last ones";
  }
}
