package dev.idemkit.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.Outbox;
import dev.idemkit.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class OutboxMetricsTest {

  private final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T00:00:00Z"));
  private final AtomicReference<Outbox.Backlog> backlog =
      new AtomicReference<>(new Outbox.Backlog(12, 2, Duration.ofSeconds(90)));
  private final AtomicInteger queries = new AtomicInteger();
  private final OutboxMetrics metrics =
      new OutboxMetrics(
          () -> {
            queries.incrementAndGet();
            return backlog.get();
          },
          () -> 3L,
          clock,
          Duration.ofSeconds(10));
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void gaugesReadTheBacklogAtMostOncePerRefreshInterval() {
    metrics.bindTo(registry);

    assertThat(registry.get(OutboxMetricNames.BACKLOG).gauge().value()).isEqualTo(12);
    assertThat(registry.get(OutboxMetricNames.PARKED_EVENTS).gauge().value()).isEqualTo(2);
    assertThat(registry.get(OutboxMetricNames.PARKED_MESSAGES).gauge().value()).isEqualTo(3);
    assertThat(
            registry.get(OutboxMetricNames.OLDEST_UNSENT_AGE).timeGauge().value(TimeUnit.SECONDS))
        .isEqualTo(90);
    assertThat(queries).hasValue(1);

    backlog.set(new Outbox.Backlog(0, 0, Duration.ZERO));
    assertThat(registry.get(OutboxMetricNames.BACKLOG).gauge().value()).isEqualTo(12);
    clock.advance(Duration.ofSeconds(10));
    assertThat(registry.get(OutboxMetricNames.BACKLOG).gauge().value()).isZero();
    assertThat(queries).hasValue(2);
  }

  @Test
  void parkedDeliveriesAreAGaugeOnlyWhereACountIsGiven() {
    AtomicInteger parkedMails = new AtomicInteger(4);
    SimpleMeterRegistry withDeliveries = new SimpleMeterRegistry();
    new OutboxMetrics(backlog::get, () -> 3L, clock, Duration.ofSeconds(10))
        .parkedDeliveries(() -> (long) parkedMails.get())
        .bindTo(withDeliveries);
    metrics.bindTo(registry);

    assertThat(withDeliveries.get(OutboxMetricNames.PARKED_DELIVERIES).gauge().value())
        .isEqualTo(4);
    assertThat(registry.find(OutboxMetricNames.PARKED_DELIVERIES).gauge()).isNull();

    parkedMails.set(0);
    clock.advance(Duration.ofSeconds(10));
    assertThat(withDeliveries.get(OutboxMetricNames.PARKED_DELIVERIES).gauge().value()).isZero();
  }

  @Test
  void aParkedDeliveriesCountThatFailsReadsNaNAndTheOtherGaugesStillRead() {
    SimpleMeterRegistry r = new SimpleMeterRegistry();
    new OutboxMetrics(backlog::get, () -> 3L, clock, Duration.ofSeconds(10))
        .parkedDeliveries(
            () -> {
              throw new java.sql.SQLException("database down");
            })
        .bindTo(r);

    assertThat(r.get(OutboxMetricNames.PARKED_DELIVERIES).gauge().value()).isNaN();
    assertThat(r.get(OutboxMetricNames.PARKED_EVENTS).gauge().value()).isEqualTo(2);
  }

  @Test
  void everyCounterExistsAtZeroBeforeItsFirstEvent() {
    javax.sql.DataSource unused =
        (javax.sql.DataSource)
            java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class},
                (proxy, method, args) -> {
                  throw new UnsupportedOperationException("no database in this test");
                });
    dev.idemkit.outbox.InboxConsumer ledger =
        dev.idemkit.outbox.InboxConsumer.builder("ledger", unused, (tx, m) -> {})
            .redeliveryHorizon(Duration.ofDays(7))
            .retention(Duration.ofDays(14))
            .build();

    metrics.bindTo(registry);
    metrics.expect(java.util.List.of(ledger));

    assertThat(registry.get(OutboxMetricNames.PUBLISHED).counter().count()).isZero();
    assertThat(registry.get(OutboxMetricNames.PUBLISH_FAILED).counter().count()).isZero();
    for (String name :
        new String[] {
          OutboxMetricNames.CONSUMED,
          OutboxMetricNames.DUPLICATES_SKIPPED,
          OutboxMetricNames.CONSUME_FAILED
        }) {
      assertThat(registry.get(name).tag("consumer", "ledger").counter().count()).as(name).isZero();
    }
    // The same counters then count.
    metrics.consumeFailed("ledger");
    assertThat(
            registry
                .get(OutboxMetricNames.CONSUME_FAILED)
                .tag("consumer", "ledger")
                .counter()
                .count())
        .isEqualTo(1);
  }

  @Test
  void aFailingQueryReportsNaN() {
    OutboxMetrics failing =
        new OutboxMetrics(
            () -> {
              throw new java.sql.SQLException("down");
            },
            () -> 0L,
            clock,
            Duration.ofSeconds(10));
    failing.bindTo(registry);
    assertThat(registry.get(OutboxMetricNames.BACKLOG).gauge().value()).isNaN();
  }

  @Test
  void countersCountRatesPerConsumerAndChannel() {
    metrics.bindTo(registry);
    metrics.published(5);
    metrics.publishFailed(2);
    metrics.consumed("ledger", 4);
    metrics.consumed("receipts", 1);
    metrics.duplicatesSkipped("ledger", 3);
    metrics.consumeFailed("ledger");
    metrics.delivered("mail", 2);

    assertThat(registry.get(OutboxMetricNames.PUBLISHED).counter().count()).isEqualTo(5);
    assertThat(registry.get(OutboxMetricNames.PUBLISH_FAILED).counter().count()).isEqualTo(2);
    assertThat(registry.get(OutboxMetricNames.CONSUMED).tag("consumer", "ledger").counter().count())
        .isEqualTo(4);
    assertThat(
            registry
                .get(OutboxMetricNames.DUPLICATES_SKIPPED)
                .tag("consumer", "ledger")
                .counter()
                .count())
        .isEqualTo(3);
    assertThat(registry.get(OutboxMetricNames.CONSUME_FAILED).counter().count()).isEqualTo(1);
    assertThat(registry.get(OutboxMetricNames.DELIVERED).tag("channel", "mail").counter().count())
        .isEqualTo(2);
  }

  @Test
  void countsHeldReleasedAndStaleMessagesPerConsumerAndGaugesTheHeld() {
    OutboxMetrics withHeld =
        new OutboxMetrics(
            () -> new Outbox.Backlog(0, 0, Duration.ZERO),
            () -> 0L,
            () -> 7L,
            Clock.systemUTC(),
            Duration.ofSeconds(10));
    withHeld.bindTo(registry);
    withHeld.messagesHeld("ledger", 2);
    withHeld.messagesHeld("ledger", 1);
    withHeld.heldReleased("ledger", 3);
    withHeld.staleSkipped("ledger", 1);

    assertThat(registry.get(OutboxMetricNames.GAP_HELD).tag("consumer", "ledger").counter().count())
        .isEqualTo(3);
    assertThat(
            registry
                .get(OutboxMetricNames.GAP_RELEASED)
                .tag("consumer", "ledger")
                .counter()
                .count())
        .isEqualTo(3);
    assertThat(
            registry
                .get(OutboxMetricNames.STALE_SKIPPED)
                .tag("consumer", "ledger")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(registry.get(OutboxMetricNames.HELD_MESSAGES).gauge().value()).isEqualTo(7);
  }
}
