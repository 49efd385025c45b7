package dev.idemkit.micrometer;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Idemkit's meters in one object: the {@linkplain #listener() listener} the engine reports to, and
 * a {@link MeterBinder} that binds its meters together with the gauge {@value
 * IdempotencyMetricNames#IN_PROGRESS_AGE_MAX}. Names are in {@link IdempotencyMetricNames}.
 *
 * <pre>{@code
 * IdempotencyMetrics metrics = new IdempotencyMetrics(store, Clock.systemUTC());
 * metrics.bindTo(meterRegistry);
 * Idempotency idempotency =
 *     Idempotency.create(store, IdempotencyConfig.builder().listener(metrics.listener()).build());
 * }</pre>
 *
 * <p>Made to be one bean: a Spring auto-configuration declares it, hands {@link #listener()} to the
 * engine's configuration, and Micrometer binds it (as a {@code MeterBinder}) to the registry.
 * Events the engine reports before the binding are not recorded.
 *
 * <p><b>The gauge.</b> A time gauge (in the registry's base time unit, seconds for most): the age
 * of the oldest unfinished record, from {@link IdempotencyStore#oldestUnfinishedSince()}: a record
 * in progress (its owner at work, or dead with its lease still running) or awaiting recovery (an
 * unknown outcome, between attempts or escalated to an operator). A healthy service reads about as
 * long as its slowest operation takes; a record that is stuck keeps the gauge growing until it is
 * finished or resolved. 0 when no record is unfinished; {@code NaN} when the store could not be
 * asked (the gauge never throws). Age is measured from the record's {@link
 * IdempotencyRecord#createdAt() createdAt}, when its key was claimed: how long the client has been
 * waiting for a final answer. {@code updatedAt} would restart at every renewal and every failed
 * recovery attempt, and so hide a record stuck in a loop of failed recoveries, which is what the
 * gauge is for.
 *
 * <p>A scrape must never hammer the database: the value is computed at most once per refresh
 * interval (10 s by default) and read from a cache in between, so the gauge lags by up to that
 * interval. A store failure is cached too. Only one thread queries the store at a time; a scrape
 * that finds a query under way gets the previous value instead of waiting.
 *
 * <p>Thread-safe.
 */
public final class IdempotencyMetrics implements MeterBinder {

  private static final System.Logger LOG = System.getLogger(IdempotencyMetrics.class.getName());

  /** How long a computed gauge value is reused by default. */
  public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(10);

  private final IdempotencyStore store;
  private final Clock clock;
  private final Duration refreshInterval;
  private final MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener();

  /** Held while one thread queries the store; others read {@link #last} instead of waiting. */
  private final ReentrantLock refreshing = new ReentrantLock();

  private volatile Sample last;

  /** The gauge value and when it was computed. */
  private record Sample(double seconds, Instant takenAt) {}

  /**
   * Metrics for the records in {@code store}, the gauge refreshed at most every {@link
   * #DEFAULT_REFRESH_INTERVAL}.
   *
   * @param clock what "now" is for the gauge's age and its refresh interval; the store's clock
   *     where possible (a database store keeps the database's time, so a skew between the two shows
   *     in the age; a negative age is reported as 0)
   */
  public IdempotencyMetrics(IdempotencyStore store, Clock clock) {
    this(store, clock, DEFAULT_REFRESH_INTERVAL);
  }

  /**
   * Metrics for the records in {@code store}, the gauge refreshed at most every {@code
   * refreshInterval}.
   *
   * @param clock what "now" is for the gauge's age and its refresh interval (see {@link
   *     #IdempotencyMetrics(IdempotencyStore, Clock)})
   * @param refreshInterval how long a computed gauge value is reused; positive
   */
  public IdempotencyMetrics(IdempotencyStore store, Clock clock, Duration refreshInterval) {
    this.store = Objects.requireNonNull(store, "store");
    this.clock = Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(refreshInterval, "refreshInterval");
    if (refreshInterval.isNegative() || refreshInterval.isZero()) {
      throw new IllegalArgumentException("refreshInterval must be positive: " + refreshInterval);
    }
    this.refreshInterval = refreshInterval;
  }

  /**
   * The listener to give the engine ({@code IdempotencyConfig.builder().listener(...)}). Always the
   * same instance; it records into every registry this object is bound to.
   */
  public IdempotencyListener listener() {
    return listener;
  }

  /**
   * Binds the listener's meters and the gauge {@value IdempotencyMetricNames#IN_PROGRESS_AGE_MAX}
   * to {@code registry}. Binding several registries records into each.
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    listener.bindTo(registry);
    // A time gauge: published in the registry's base time unit (seconds for Prometheus).
    TimeGauge.builder(
            IdempotencyMetricNames.IN_PROGRESS_AGE_MAX,
            this,
            TimeUnit.SECONDS,
            IdempotencyMetrics::oldestUnfinishedAgeSeconds)
        .description(
            "Age since it was claimed of the oldest record in progress or awaiting recovery; 0 when none is")
        // Held strongly: a gauge's weak reference would read NaN once a caller drops this object.
        .strongReference(true)
        .register(registry);
  }

  /** The gauge's value: cached, 0 when nothing is unfinished, NaN when the store failed. */
  double oldestUnfinishedAgeSeconds() {
    Instant now = clock.instant();
    Sample sample = last;
    if (isFresh(sample, now)) {
      return sample.seconds();
    }
    if (!refreshing.tryLock()) {
      return sample == null ? Double.NaN : sample.seconds();
    }
    try {
      sample = last;
      if (isFresh(sample, now)) {
        return sample.seconds();
      }
      double seconds = computeAgeSeconds(now);
      last = new Sample(seconds, now);
      return seconds;
    } finally {
      refreshing.unlock();
    }
  }

  private boolean isFresh(Sample sample, Instant now) {
    // A clock that went backwards makes the sample stale too, rather than fresh for ever.
    return sample != null
        && !now.isBefore(sample.takenAt())
        && now.isBefore(sample.takenAt().plus(refreshInterval));
  }

  private double computeAgeSeconds(Instant now) {
    Optional<Instant> oldest;
    try {
      oldest = store.oldestUnfinishedSince();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "Could not find the oldest unfinished record", e);
      return Double.NaN;
    }
    if (oldest == null || oldest.isEmpty()) {
      return 0;
    }
    Duration age = Duration.between(oldest.get(), now);
    if (age.isNegative()) {
      return 0;
    }
    return age.getSeconds() + age.getNano() / 1e9;
  }
}
