package dev.idemkit;

import dev.idemkit.spi.IdempotencyListener;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The engine's settings; immutable and thread-safe. Build with {@link #builder()}.
 *
 * @param lease how long an owner holds a record before another request may take it over; longer
 *     than any single phase, external call timeout included
 * @param defaultTtl the expiry window of a record when a request names none (24 h)
 * @param outcomePendingRetryAfter the {@code Retry-After} given while a downstream outcome is
 *     unknown
 * @param listener hears outcomes, for meters
 * @param quotas per-tenant limits on new keys ({@link Quotas#NONE}: none)
 * @param ticker nanoseconds of a monotonic clock, for durations measured in this JVM (when a lease
 *     is due for renewal); {@code System::nanoTime} unless a test drives it
 * @param recoverySchedule when a retry that finds an outcome still unknown may try again, and when
 *     the record is left to an operator; {@code null} (the default): a retry tries again as soon as
 *     the record is free and says {@code outcomePendingRetryAfter}, and only a recovery worker
 *     spaces attempts out (a Spring Boot application gets the starter's {@code idemkit.recovery.*})
 */
public record IdempotencyConfig(
    Duration lease,
    Duration defaultTtl,
    Duration outcomePendingRetryAfter,
    IdempotencyListener listener,
    Quotas quotas,
    LongSupplier ticker,
    RecoverySchedule recoverySchedule) {

  public IdempotencyConfig {
    requirePositive("lease", lease);
    requirePositive("defaultTtl", defaultTtl);
    requirePositive("outcomePendingRetryAfter", outcomePendingRetryAfter);
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(quotas, "quotas");
    Objects.requireNonNull(ticker, "ticker");
  }

  public static Builder builder() {
    return new Builder();
  }

  private static void requirePositive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + d);
    }
  }

  /** Builds an {@link IdempotencyConfig}; every setting has a default. */
  public static final class Builder {
    private Duration lease = Duration.ofSeconds(30);
    private Duration defaultTtl = Duration.ofHours(24);
    private Duration outcomePendingRetryAfter = Duration.ofSeconds(2);
    private IdempotencyListener listener = IdempotencyListener.NONE;
    private LongSupplier ticker = System::nanoTime;
    private Quotas quotas = Quotas.NONE;
    private RecoverySchedule recoverySchedule;

    private Builder() {}

    public Builder lease(Duration lease) {
      this.lease = lease;
      return this;
    }

    public Builder defaultTtl(Duration ttl) {
      this.defaultTtl = ttl;
      return this;
    }

    public Builder outcomePendingRetryAfter(Duration retryAfter) {
      this.outcomePendingRetryAfter = retryAfter;
      return this;
    }

    public Builder listener(IdempotencyListener listener) {
      this.listener = listener;
      return this;
    }

    /** Per-tenant limits on new keys. */
    public Builder quotas(Quotas quotas) {
      this.quotas = quotas;
      return this;
    }

    /** A monotonic nanosecond clock for durations measured in this JVM; for tests. */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = ticker;
      return this;
    }

    /**
     * Spaces out the attempts on an outcome that stays unknown and escalates it, whoever attempts:
     * see {@link RecoverySchedule}. Give a recovery worker the same schedule.
     */
    public Builder recoverySchedule(RecoverySchedule schedule) {
      this.recoverySchedule = schedule;
      return this;
    }

    public IdempotencyConfig build() {
      return new IdempotencyConfig(
          lease, defaultTtl, outcomePendingRetryAfter, listener, quotas, ticker, recoverySchedule);
    }
  }
}
