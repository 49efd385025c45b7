package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay against a real PostgreSQL: acknowledgements, retries, parking, order, late commits. */
class OutboxRelayIT {

  private final DataSource ds = TestPostgres.dataSource();
  private final TestClock clock = new TestClock();
  private final Outbox outbox = Outbox.create(ds, clock);

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  private OutboxRelay.Builder relay(RecordingTransport transport) {
    return OutboxRelay.builder(ds, transport)
        .clock(clock)
        .backoff(Duration.ofSeconds(1), Duration.ofSeconds(60));
  }

  private static long unsent() {
    return TestPostgres.count("select count(*) from idemkit_outbox where sent_at is null");
  }

  @Test
  void marksSentOnlyWhatTheTransportAcknowledgedAndRetriesTheRestAfterBackoff() throws Exception {
    UUID ok1 = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    UUID bad = appendCommitted(outbox, paymentCompleted("p2", 1)).event().eventId();
    UUID ok2 = appendCommitted(outbox, paymentCompleted("p3", 1)).event().eventId();
    RecordingTransport transport = new RecordingTransport(e -> e.eventId().equals(bad));
    OutboxRelay relay = relay(transport).build();

    OutboxRelay.Round first = relay.relayOnce();

    assertThat(first).isEqualTo(new OutboxRelay.Round(3, 2, 1, 0));
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox where sent_at is not null"))
        .isEqualTo(2);
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where event_id = ? and sent_at is null"
                    + " and attempts = 1 and last_error like '%broker down%'",
                bad))
        .isEqualTo(1);
    assertThat(relay.relayOnce().picked()).as("not due before its backoff").isZero();

    transport.failWhen(e -> false);
    clock.advance(Duration.ofSeconds(1));
    assertThat(relay.relayOnce()).isEqualTo(new OutboxRelay.Round(1, 1, 0, 0));
    assertThat(unsent()).isZero();
    assertThat(transport.sends.get(ok1)).hasValue(1);
    assertThat(transport.sends.get(ok2)).hasValue(1);
    assertThat(transport.sends.get(bad)).hasValue(2);
  }

  @Test
  void anEventNotAcknowledgedInTimeStaysUnsent() throws Exception {
    appendCommitted(outbox, paymentCompleted("p1", 1));
    OutboxRelay relay =
        OutboxRelay.builder(
                ds,
                new RecordingTransport() {
                  @Override
                  public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
                    return events.stream()
                        .map(e -> (CompletionStage<Void>) new CompletableFuture<Void>())
                        .toList();
                  }
                })
            .clock(clock)
            .ackTimeout(Duration.ofMillis(200))
            .build();

    assertThat(relay.relayOnce().failed()).isEqualTo(1);
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where sent_at is null"
                    + " and last_error like 'not acknowledged within%'"))
        .isEqualTo(1);
  }

  /**
   * A poison event is parked after N failures and holds its aggregate's later events back; an
   * operator sees it and re-queues it; then both go, in order, once each.
   */
  @Test
  void parksAfterTheLastAttemptHoldsTheAggregateBackAndSendsOnceWhenRequeued() throws Exception {
    UUID poison = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    UUID later =
        appendCommitted(
                outbox,
                new NewEvent("PaymentRefunded", "tenant-a", "payment", "p1", "refund:p1", "{}"))
            .event()
            .eventId();
    RecordingTransport transport = new RecordingTransport(e -> e.eventId().equals(poison));
    OutboxRelay relay = relay(transport).maxAttempts(3).build();

    for (int i = 0; i < 3; i++) {
      relay.relayOnce();
      clock.advance(Duration.ofMinutes(1));
    }
    assertThat(relay.relayOnce().picked()).isZero();
    assertThat(transport.sends.get(poison)).hasValue(3);
    assertThat(transport.sends).doesNotContainKey(later);
    assertThat(outbox.backlog().parked()).isEqualTo(1);
    assertThat(outbox.backlog().unsent()).isEqualTo(1);
    List<Outbox.ParkedEvent> parked = outbox.parked(10);
    assertThat(parked).hasSize(1);
    assertThat(parked.get(0).event().eventId()).isEqualTo(poison);
    assertThat(parked.get(0).attempts()).isEqualTo(3);
    assertThat(parked.get(0).lastError()).contains("broker down");

    transport.failWhen(e -> false);
    assertThat(outbox.requeue(poison)).isTrue();
    assertThat(outbox.requeue(poison)).as("no longer parked").isFalse();
    relay.relayOnce();
    relay.relayOnce();

    assertThat(transport.sends.get(poison)).hasValue(4);
    assertThat(transport.sends.get(later)).hasValue(1);
    assertThat(transport.violations).isEmpty();
    assertThat(unsent()).isZero();
    assertThat(outbox.backlog()).isEqualTo(new Outbox.Backlog(0, 0, Duration.ZERO));
  }

  /**
   * A transport-wide outage is not a poison event: with 3 attempts allowed, ten rounds of a
   * transport that reports itself unavailable park nothing and count no attempt; the error says
   * what happened; the waits grow from round to round; once the transport is back every event goes,
   * in order, and only the event's own failures count again.
   */
  @Test
  void aTransportOutageBacksOffWithoutUsingUpAttemptsOrParking() throws Exception {
    UUID first = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    UUID second =
        appendCommitted(
                outbox,
                new NewEvent("PaymentRefunded", "tenant-a", "payment", "p1", "refund:p1", "{}"))
            .event()
            .eventId();
    UUID other = appendCommitted(outbox, paymentCompleted("p2", 2)).event().eventId();
    RecordingTransport transport = new RecordingTransport();
    transport.down(true);
    OutboxRelay relay = relay(transport).maxAttempts(3).build();

    List<Duration> waits = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      OutboxRelay.Round round = relay.relayOnce();
      assertThat(round.picked()).isEqualTo(2);
      assertThat(round.parked()).isZero();
      waits.add(
          Duration.between(
              clock.instant(),
              TestPostgres.timestamp(
                  "select next_attempt_at from idemkit_outbox where event_id = '" + first + "'")));
      clock.advance(Duration.ofMinutes(1)); // past the longest wait (60 s)
    }
    assertThat(waits.subList(0, 4))
        .containsExactly(
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Duration.ofSeconds(4),
            Duration.ofSeconds(8));
    assertThat(waits.get(9)).isEqualTo(Duration.ofSeconds(60));
    assertThat(transport.sends.get(first)).hasValue(10);
    assertThat(outbox.backlog().parked()).isZero();
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where attempts = 0 and sent_at is null"))
        .isEqualTo(3);
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where event_id in (?, ?)"
                    + " and last_error = 'transport unavailable: no connection to the broker'",
                first,
                other))
        .isEqualTo(2);

    transport.down(false);
    transport.failWhen(e -> e.eventId().equals(other));
    relay.relayOnce();
    relay.relayOnce();
    assertThat(transport.sends.get(second)).hasValue(1);
    assertThat(transport.violations).isEmpty();
    assertThat(unsent()).isEqualTo(1);
    assertThat(
            TestPostgres.count(
                "select attempts from idemkit_outbox where event_id = '" + other + "'"))
        .as("the event's own failure counts")
        .isEqualTo(1);
  }

  /**
   * The transaction that began first (and wrote the earliest occurred-at) commits last, after 20
   * later ones were committed and sent by a running relay: its event is still sent.
   */
  @Test
  void anEventWhoseTransactionCommitsLateIsNotSkipped() throws Exception {
    RecordingTransport transport = new RecordingTransport();
    try (OutboxRelay relay =
            relay(transport)
                .clock(java.time.Clock.systemUTC())
                .pollInterval(Duration.ofMillis(5))
                .build();
        Connection slow = ds.getConnection()) {
      Outbox live = Outbox.create(ds);
      slow.setAutoCommit(false);
      UUID late = live.append(slow, paymentCompleted("late", 1)).event().eventId();
      relay.start();
      for (int i = 0; i < 20; i++) {
        appendCommitted(live, paymentCompleted("p" + i, 1));
      }
      awaitCondition(() -> transport.sent.size() == 20);
      relay.relayOnce();
      assertThat(transport.sends).doesNotContainKey(late);

      slow.commit();
      awaitCondition(() -> transport.sends.containsKey(late));
    }
    assertThat(transport.sent).hasSize(21);
    assertThat(unsent()).isZero();
  }

  /**
   * Four relays race over 2,000 events of 100 aggregates. Without faults every event is sent
   * exactly once (no event in two relays' hands); with a quarter of sends failing, no event is sent
   * before the previous one of its aggregate was acknowledged, and all are sent in the end.
   */
  @Test
  void concurrentRelaysKeepEachAggregatesOrderAndNeverShareAnEvent() throws Exception {
    int aggregates = 100;
    int perAggregate = 20;
    appendMany(aggregates, perAggregate);
    RecordingTransport clean = new RecordingTransport();
    runRelaysUntilDrained(clean, 4);
    assertThat(clean.violations).isEmpty();
    assertThat(clean.sent).hasSize(aggregates * perAggregate);
    assertThat(clean.sends.values().stream().map(a -> a.get()).collect(Collectors.toSet()))
        .isEqualTo(Set.of(1));

    TestPostgres.reset();
    appendMany(aggregates, perAggregate);
    RecordingTransport faulty =
        new RecordingTransport(e -> ThreadLocalRandom.current().nextInt(4) == 0);
    runRelaysUntilDrained(faulty, 4);
    assertThat(faulty.violations).isEmpty();
    assertThat(faulty.sends).hasSize(aggregates * perAggregate);
    assertThat(faulty.sent.size()).isGreaterThan(aggregates * perAggregate);
    assertThat(unsent()).isZero();
  }

  private void appendMany(int aggregates, int perAggregate) throws Exception {
    // Interleaved across aggregates, so every relay batch mixes them.
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int n = 0; n < perAggregate; n++) {
        for (int a = 0; a < aggregates; a++) {
          outbox.append(
              c, new NewEvent("Step", "tenant-a", "thing", "a" + a, "a" + a + "/" + n, "{}"));
        }
        c.commit();
      }
    }
  }

  private void runRelaysUntilDrained(RecordingTransport transport, int relays) throws Exception {
    OutboxRelay relay =
        relay(transport)
            .backoff(Duration.ofMillis(1), Duration.ofMillis(1))
            .batchSize(50)
            .maxAttempts(Integer.MAX_VALUE)
            .build();
    ExecutorService pool = Executors.newFixedThreadPool(relays);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < relays; i++) {
      done.add(
          pool.submit(
              () -> {
                go.await();
                while (unsent() > 0) {
                  relay.relayOnce();
                  clock.advance(Duration.ofMillis(1)); // a failed event is due again
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(5, TimeUnit.MINUTES);
    }
    pool.shutdown();
  }

  @Test
  void sentEventsAreDeletedAfterTheRetentionAndUnsentOnesNever() throws Exception {
    appendCommitted(outbox, paymentCompleted("p1", 1));
    RecordingTransport transport = new RecordingTransport();
    OutboxRelay relay = relay(transport).sentRetention(Duration.ofDays(7)).build();
    relay.relayOnce();
    transport.failWhen(e -> true);
    appendCommitted(outbox, paymentCompleted("p2", 1));

    clock.advance(Duration.ofDays(6));
    assertThat(relay.deleteSentEvents()).isZero();
    clock.advance(Duration.ofDays(2));
    assertThat(relay.deleteSentEvents()).isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(1);
    assertThat(outbox.backlog().oldestUnsentAge()).isEqualTo(Duration.ofDays(8));
  }

  /**
   * Sent events past the retention go in batches of {@value OutboxRelay#DELETE_BATCH}, each a short
   * statement of its own, and a row another transaction holds is skipped, not waited for (one
   * {@code delete} of the whole backlog held every row's lock until it ended, and waited for any
   * row locked elsewhere). Recent sent events and unsent ones of any age stay.
   */
  @Test
  void sentEventsGoInBatchesAndARowHeldElsewhereIsSkippedNotWaitedFor() throws Exception {
    OutboxRelay relay = relay(new RecordingTransport()).sentRetention(Duration.ofDays(7)).build();
    Instant now = clock.instant();
    insertEvents("old-", 2_500, now.minus(Duration.ofDays(8)), true);
    insertEvents("recent-", 10, now.minus(Duration.ofDays(1)), true);
    insertEvents("unsent-", 5, now.minus(Duration.ofDays(8)), false);

    assertThat(relay.deleteSentBatch()).isEqualTo(OutboxRelay.DELETE_BATCH);
    try (Connection holder = ds.getConnection()) {
      holder.setAutoCommit(false);
      try (PreparedStatement ps =
          holder.prepareStatement(
              "select event_id from idemkit_outbox where sent_at is not null"
                  + " and aggregate_id like 'old-%' order by sent_at limit 1 for update")) {
        ps.executeQuery().close();
      }
      ExecutorService cleaner = Executors.newSingleThreadExecutor();
      try {
        Future<Integer> deleted = cleaner.submit(relay::deleteSentEvents);
        assertThat(deleted.get(60, TimeUnit.SECONDS)).isEqualTo(1_499);
      } finally {
        cleaner.shutdownNow();
        holder.rollback();
      }
    }
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where aggregate_id like 'old-%'"))
        .isEqualTo(1);
    assertThat(relay.deleteSentEvents()).isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(15);
    assertThat(unsent()).isEqualTo(5);
  }

  private void insertEvents(String prefix, int n, Instant at, boolean sent) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                """
                insert into idemkit_outbox (event_id, event_type, tenant, aggregate_type,
                    aggregate_id, sequence, occurred_at, payload, next_attempt_at, sent_at)
                select gen_random_uuid(), 'PaymentCompleted', 'tenant_a', 'payment', ? || i, 1,
                       ?, '{}', ?, case when ? then ? end
                  from generate_series(1, ?) as i
                """)) {
      java.time.OffsetDateTime t = at.atOffset(java.time.ZoneOffset.UTC);
      ps.setString(1, prefix);
      ps.setObject(2, t);
      ps.setObject(3, t);
      ps.setBoolean(4, sent);
      ps.setObject(5, t);
      ps.setInt(6, n);
      ps.executeUpdate();
    }
  }

  /**
   * A transport whose send throws an {@link Error}: that round's events fail (each attempt counted,
   * parked at the last like any failure) and the relay's thread goes on with the next rounds.
   */
  @Test
  void anErrorFromTheTransportFailsItsBatchAndTheRelayThreadGoesOn() throws Exception {
    UUID first = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    java.util.concurrent.atomic.AtomicInteger errors =
        new java.util.concurrent.atomic.AtomicInteger(1);
    RecordingTransport transport =
        new RecordingTransport() {
          @Override
          public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
            if (errors.getAndDecrement() > 0) {
              throw new AssertionError("transport bug");
            }
            return super.send(events);
          }
        };
    try (OutboxRelay relay = relay(transport).pollInterval(Duration.ofMillis(5)).build()) {
      relay.start();
      awaitCondition(
          () ->
              TestPostgres.count(
                      "select count(*) from idemkit_outbox where attempts = 1"
                          + " and last_error like 'AssertionError: transport bug%'")
                  == 1);
      clock.advance(Duration.ofSeconds(1)); // the backoff after the failed attempt
      awaitCondition(() -> unsent() == 0);
    }
    assertThat(transport.sends.get(first)).hasValue(1);

    UUID poison = appendCommitted(outbox, paymentCompleted("p2", 1)).event().eventId();
    errors.set(Integer.MAX_VALUE);
    OutboxRelay parking = relay(transport).maxAttempts(2).build();
    assertThat(parking.relayOnce()).isEqualTo(new OutboxRelay.Round(1, 0, 1, 0));
    clock.advance(Duration.ofSeconds(1));
    assertThat(parking.relayOnce()).isEqualTo(new OutboxRelay.Round(1, 0, 1, 1));
    assertThat(outbox.parked(10)).extracting(p -> p.event().eventId()).containsExactly(poison);
  }

  /**
   * Closing the relay while a round waits for the transport's acknowledgement counts no attempt:
   * the event stays due, unparked, with its attempts as they were (here one attempt from parking),
   * and the next relay sends it.
   */
  @Test
  void closingTheRelayWhileASendIsInFlightCountsNoAttempt() throws Exception {
    UUID id = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    java.time.Instant appendedAt = clock.instant();
    CountDownLatch inFlight = new CountDownLatch(1);
    RecordingTransport neverAnswers =
        new RecordingTransport() {
          @Override
          public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
            inFlight.countDown();
            return events.stream()
                .map(e -> (CompletionStage<Void>) new CompletableFuture<Void>())
                .toList();
          }
        };
    OutboxRelay relay = relay(neverAnswers).maxAttempts(1).build();
    relay.start();
    assertThat(inFlight.await(60, TimeUnit.SECONDS)).isTrue();
    relay.close();

    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where event_id = ? and attempts = 0"
                    + " and parked_at is null and sent_at is null and next_attempt_at = ?",
                id,
                appendedAt.atOffset(java.time.ZoneOffset.UTC)))
        .as("no attempt counted, not parked, still due")
        .isEqualTo(1);
    RecordingTransport next = new RecordingTransport();
    assertThat(relay(next).build().relayOnce()).isEqualTo(new OutboxRelay.Round(1, 1, 0, 0));
  }

  static void awaitCondition(java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not reached within 60 s");
      }
      Thread.sleep(10);
    }
  }

  /**
   * An aggregate window of 3: a round carries an aggregate's three oldest unsent events, handed to
   * the transport in sequence; the default (1) sends one per round.
   */
  @Test
  void anAggregateWindowSendsSeveralEventsOfAnAggregatePerRoundInSequence() throws Exception {
    for (int i = 1; i <= 5; i++) {
      appendCommitted(
          outbox, new NewEvent("Booked", "tenant-a", "account", "acc", "booking:" + i, "{}"));
    }
    appendCommitted(outbox, paymentCompleted("p1", 1));
    RecordingTransport one = new RecordingTransport();
    assertThat(relay(one).build().relayOnce().sent()).as("window 1").isEqualTo(2);
    TestPostgres.execute("truncate idemkit_outbox");
    for (int i = 1; i <= 5; i++) {
      appendCommitted(
          outbox, new NewEvent("Booked", "tenant-a", "account", "acc2", "booking:" + i, "{}"));
    }
    appendCommitted(outbox, paymentCompleted("p2", 1));

    RecordingTransport windowed = new RecordingTransport();
    OutboxRelay relay = relay(windowed).aggregateWindow(3).build();
    assertThat(relay.relayOnce().sent()).isEqualTo(4);
    assertThat(relay.relayOnce().sent()).isEqualTo(2);
    assertThat(relay.relayOnce().picked()).isZero();
    assertThat(windowed.violations).isEmpty();
    assertThat(windowed.sent)
        .filteredOn(e -> e.aggregateId().equals("acc2"))
        .extracting(EventEnvelope::sequence)
        .containsExactly(1L, 2L, 3L, 4L, 5L);
  }
}
