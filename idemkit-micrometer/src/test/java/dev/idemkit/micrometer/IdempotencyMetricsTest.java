package dev.idemkit.micrometer;

import static dev.idemkit.micrometer.IdempotencyMetricNames.IN_PROGRESS_AGE_MAX;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REPLAY_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REQUESTS;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_OPERATION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperationResult;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.testing.InMemoryIdempotencyStore;
import dev.idemkit.testing.MutableClock;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The binder as a Spring auto-configuration would use it, and the recovery gauge. */
class IdempotencyMetricsTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(24);
  private static final Duration REFRESH = Duration.ofSeconds(10);

  private MutableClock clock;
  private CountingStore store;
  private SimpleMeterRegistry registry;
  private IdempotencyMetrics metrics;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(Instant.parse("2026-01-15T10:00:00Z"));
    store = new CountingStore(new InMemoryIdempotencyStore(clock));
    registry = new SimpleMeterRegistry();
    metrics = new IdempotencyMetrics(store, clock, REFRESH);
    metrics.bindTo(registry);
  }

  @Test
  void theGaugeIsZeroWhenNoRecordNeedsRecovery() {
    assertThat(ageGauge().value()).isZero();
    assertThat(ageGauge().baseTimeUnit()).isEqualTo(TimeUnit.SECONDS);
    assertThat(ageGauge().value(TimeUnit.MILLISECONDS)).isZero();
    assertThat(ageGauge().getId().getTags()).isEmpty();
  }

  @Test
  void theGaugeReportsTheAgeOfARecordInProgressWhileItsOwnerHoldsItAndAfter() throws Exception {
    abandonClaim(ScopedKey.of("tenant-a", "create_payment", "k-abandoned"));
    clock.advance(Duration.ofSeconds(12));
    assertThat(ageGauge().value()).as("the owner still holds the lease").isEqualTo(12.0);

    clock.advance(LEASE);

    assertThat(ageGauge().value()).as("the lease ran out").isEqualTo(42.0);
  }

  @Test
  void aFinishedRecordLeavesTheGauge() throws Exception {
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "k-finished");
    Ownership owner = claim(id);
    clock.advance(Duration.ofSeconds(20));
    store.inTransaction(
        tx -> {
          store.finish(tx, owner, FinalAnswer.completed(response()));
          return null;
        });

    assertThat(ageGauge().value()).isZero();
  }

  @Test
  void theAgeIsMeasuredFromWhenTheKeyWasClaimedNotFromTheLastWrite() throws Exception {
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "k-renewed-later");
    Ownership owner = claim(id);
    clock.advance(Duration.ofSeconds(20));
    store.inTransaction(tx -> store.renew(tx, owner, LEASE));
    clock.advance(LEASE.plusSeconds(1));

    assertThat(store.find(id).orElseThrow().updatedAt())
        .isEqualTo(clock.instant().minusSeconds(31));
    assertThat(ageGauge().value()).isEqualTo(51.0);
  }

  @Test
  void theGaugeAsksTheStoreAtMostOncePerRefreshInterval() throws Exception {
    abandonClaim(ScopedKey.of("tenant-a", "create_payment", "k-cached"));
    clock.advance(LEASE.plusSeconds(10));

    double first = ageGauge().value();
    clock.advance(Duration.ofSeconds(9));
    double cached = ageGauge().value();
    ageGauge().value();
    ageGauge().value();

    assertThat(first).isEqualTo(40.0);
    assertThat(cached).as("within the interval: the cached value").isEqualTo(40.0);
    assertThat(store.recoveryQueries).hasValue(1);

    clock.advance(Duration.ofSeconds(1));

    assertThat(ageGauge().value()).isEqualTo(50.0);
    assertThat(store.recoveryQueries).hasValue(2);
  }

  @Test
  void aStoreThatFailsMakesTheGaugeNaNAndNeverThrows() throws Exception {
    abandonClaim(ScopedKey.of("tenant-a", "create_payment", "k-failing"));
    clock.advance(LEASE.plusSeconds(1));
    store.failing = true;

    assertThat(ageGauge().value()).isNaN();
    assertThatCode(() -> metrics.oldestUnfinishedAgeSeconds()).doesNotThrowAnyException();
    assertThat(ageGauge().value()).isNaN();
    assertThat(store.recoveryQueries).as("a failure is cached too").hasValue(1);

    store.failing = false;
    clock.advance(REFRESH);

    assertThat(ageGauge().value()).as("recovers at the next refresh").isEqualTo(41.0);
  }

  @Test
  void theListenerRecordsIntoTheBoundRegistryAndIsAlwaysTheSameInstance() {
    Idempotency idempotency =
        Idempotency.create(store, IdempotencyConfig.builder().listener(metrics.listener()).build());
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "k-engine");
    Fingerprint command = Fingerprint.of(Map.of("amount", "10.00"));

    idempotency.execute(id, command, ctx -> OperationResult.success(response()));
    idempotency.execute(id, command, ctx -> OperationResult.success(response()));

    assertThat(metrics.listener()).isSameAs(metrics.listener());
    assertThat(registry.get(REQUESTS).tag(TAG_OPERATION, "create_payment").timers())
        .hasSize(2)
        .allSatisfy(timer -> assertThat(timer.count()).isEqualTo(1));
    assertThat(registry.get(REPLAY_COUNT).counter().count()).isEqualTo(1);
    assertThat(registry.getMeters())
        .flatExtracting(m -> m.getId().getTags())
        .extracting(Tag::getValue)
        .doesNotContain("tenant-a", "k-engine");
  }

  @Test
  void theGaugeSurvivesTheCallerDroppingTheMetricsObject() throws Exception {
    SimpleMeterRegistry other = new SimpleMeterRegistry();
    new IdempotencyMetrics(store, clock).bindTo(other);
    abandonClaim(ScopedKey.of("tenant-a", "create_payment", "k-dropped"));
    clock.advance(LEASE.plusSeconds(1));

    System.gc();

    assertThat(other.get(IN_PROGRESS_AGE_MAX).timeGauge().value()).isEqualTo(31.0);
  }

  @Test
  void theRefreshIntervalMustBePositive() {
    assertThatThrownBy(() -> new IdempotencyMetrics(store, clock, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ---- helpers -----------------------------------------------------------------------------

  private TimeGauge ageGauge() {
    return registry.get(IN_PROGRESS_AGE_MAX).timeGauge();
  }

  /**
   * Claims {@code id} through the store SPI, renews it (so a recovery worker looks after it, as a
   * phased operation's owner does), commits, and walks away.
   */
  private void abandonClaim(ScopedKey id) throws Exception {
    Ownership owner = claim(id);
    store.inTransaction(tx -> store.renew(tx, owner, LEASE));
    assertThat(store.find(id)).map(IdempotencyRecord::state).contains(RecordState.IN_PROGRESS);
  }

  private Ownership claim(ScopedKey id) throws Exception {
    return store.inTransaction(
        tx -> {
          ClaimAttempt attempt =
              store.claim(
                  tx, new NewRecord(id, Fingerprint.of(Map.of("amount", "10.00")), TTL), LEASE);
          assertThat(attempt).isInstanceOf(ClaimAttempt.Inserted.class);
          return Ownership.of(((ClaimAttempt.Inserted) attempt).record());
        });
  }

  private static StoredResponse response() {
    return StoredResponse.of(201, Map.of(), "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  /** The in-memory store, counting the gauge's queries and failing them on demand. */
  private static final class CountingStore extends ForwardingIdempotencyStore {
    final AtomicInteger recoveryQueries = new AtomicInteger();
    volatile boolean failing;

    CountingStore(IdempotencyStore delegate) {
      super(delegate);
    }

    @Override
    public Optional<Instant> oldestUnfinishedSince() {
      recoveryQueries.incrementAndGet();
      if (failing) {
        throw new IllegalStateException("connection refused");
      }
      return delegate().oldestUnfinishedSince();
    }
  }
}
