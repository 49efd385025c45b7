package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.ledger;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer applying each aggregate's messages in sequence: messages ahead of it are held (and
 * applied once the gap closes), messages behind it are skipped, batches carry several messages of
 * one aggregate, racing deliveries apply each sequence once and in order.
 */
class InboxInSequenceIT {

  private final DataSource ds = TestPostgres.dataSource();
  private final TestClock clock = new TestClock();

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  private InboxConsumer.Builder consumer(MessageHandler handler) {
    return consumer("ledger", handler).inSequence(SequenceStart.FROM_ONE);
  }

  /** A consumer named {@code name}, not in sequence unless the caller says so. */
  private InboxConsumer.Builder consumer(String name, MessageHandler handler) {
    return InboxConsumer.builder(name, ds, handler)
        .clock(clock)
        .redeliveryHorizon(Duration.ofDays(1))
        .retention(Duration.ofDays(2));
  }

  /**
   * A consumer that applied an aggregate's events 1 to 4 without keeping sequences (on the embedded
   * transport) and then applies in sequence from one (on Kafka, where only 5 and 6 come): its inbox
   * already has 1 to 4, so it applies 5 and 6 at once and skips 3 as stale, instead of holding 5
   * for ever waiting for a 1 that will not come. A consumer that applied none of them still holds
   * 5.
   */
  @Test
  void aConsumerThatAppliedEarlierEventsWithoutSequencesGoesOnFromTheLastOneItsInboxHas()
      throws Exception {
    Outbox outbox = Outbox.create(ds, clock);
    List<EventEnvelope> a1 = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      a1.add(
          Fixtures.appendCommitted(
                  outbox, new NewEvent("Shipped", "tenant-a", "order", "a1", "ship:a1:" + i, "{}"))
              .event());
    }
    List<Long> applied = new CopyOnWriteArrayList<>();
    InboxConsumer embedded = consumer("shipping", (tx, m) -> applied.add(m.sequence())).build();
    assertThat(embedded.receive(a1.subList(0, 4))).containsOnly(Received.APPLIED);

    InboxConsumer onKafka =
        consumer("shipping", (tx, m) -> applied.add(m.sequence()))
            .inSequence(SequenceStart.FROM_ONE)
            .build();
    assertThat(onKafka.receive(a1.get(4))).isEqualTo(Received.APPLIED);
    assertThat(onKafka.receive(a1.get(5))).isEqualTo(Received.APPLIED);
    assertThat(onKafka.receive(a1.get(2))).isEqualTo(Received.DUPLICATE);
    assertThat(applied).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);

    List<Long> appliedByNewcomer = new CopyOnWriteArrayList<>();
    InboxConsumer newcomer =
        consumer("audit", (tx, m) -> appliedByNewcomer.add(m.sequence()))
            .inSequence(SequenceStart.FROM_ONE)
            .build();
    assertThat(newcomer.receive(a1.get(4))).isEqualTo(Received.HELD);
    assertThat(appliedByNewcomer).isEmpty();
  }

  /**
   * The same, with the events arriving out of order: 6 before 5 is held behind the adopted 4, and
   * applied once 5 is.
   */
  @Test
  void anEventAheadOfTheAdoptedSequenceIsHeldAndReleasedInOrder() throws Exception {
    Outbox outbox = Outbox.create(ds, clock);
    List<EventEnvelope> a2 = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      a2.add(
          Fixtures.appendCommitted(
                  outbox, new NewEvent("Shipped", "tenant-a", "order", "a2", "ship:a2:" + i, "{}"))
              .event());
    }
    List<Long> applied = new CopyOnWriteArrayList<>();
    consumer("shipping", (tx, m) -> applied.add(m.sequence())).build().receive(a2.subList(0, 4));
    InboxConsumer onKafka =
        consumer("shipping", (tx, m) -> applied.add(m.sequence()))
            .inSequence(SequenceStart.FROM_ONE)
            .build();

    assertThat(onKafka.receive(a2.get(5))).isEqualTo(Received.HELD);
    assertThat(onKafka.receive(a2.get(4))).isEqualTo(Received.APPLIED);
    assertThat(onKafka.releaseHeld()).isEqualTo(1);
    assertThat(applied).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
  }

  private static EventEnvelope event(String aggregate, long sequence) {
    return event(aggregate, sequence, UUID.randomUUID());
  }

  private static EventEnvelope event(String aggregate, long sequence, UUID id) {
    return new EventEnvelope(
        id,
        "ThingHappened",
        "tenant-a",
        "account",
        aggregate,
        sequence,
        Instant.parse("2026-01-01T00:00:00Z"),
        "{\"n\":" + sequence + "}");
  }

  /** The sequences applied to {@code aggregate}, in the order they were applied. */
  private static List<Long> applied(String aggregate) {
    List<Long> out = new ArrayList<>();
    try (Connection c = TestPostgres.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "select amount from test_ledger where payment_id = ? order by applied_order")) {
      s.setString(1, aggregate);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getLong(1));
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  private static long inbox(String status) {
    return TestPostgres.count("select count(*) from idemkit_inbox where status = ?", status);
  }

  @Test
  void aMessageAheadIsHeldListedAndAppliedOnceTheGapCloses() throws Exception {
    InboxConsumer c = consumer(ledger("ledger", e -> false)).build();
    EventEnvelope one = event("a", 1);
    EventEnvelope two = event("a", 2);
    EventEnvelope three = event("a", 3);

    assertThat(c.receive(List.of(three, two))).containsExactly(Received.HELD, Received.HELD);
    assertThat(c.receive(two)).as("a redelivery of a held message").isEqualTo(Received.HELD);
    assertThat(applied("a")).isEmpty();
    assertThat(c.heldSummary().count()).isEqualTo(2);
    assertThat(c.held(10))
        .allSatisfy(h -> assertThat(h.lastApplied()).isZero())
        .extracting(h -> h.message().sequence())
        .containsExactlyInAnyOrder(2L, 3L);
    assertThat(c.held(10).get(0).message()).isIn(two, three);

    assertThat(c.receive(one)).isEqualTo(Received.APPLIED);
    assertThat(c.releaseHeld()).isEqualTo(2);
    assertThat(applied("a")).containsExactly(1L, 2L, 3L);
    assertThat(c.heldSummary().count()).isZero();
    assertThat(c.receive(List.of(one, two, three))).containsOnly(Received.DUPLICATE);
    assertThat(applied("a")).containsExactly(1L, 2L, 3L);
  }

  @Test
  void aBatchAppliesSeveralMessagesOfAnAggregateInOrderAndSkipsOnesBehind() throws Exception {
    InboxConsumer c = consumer(ledger("ledger", e -> false)).build();

    assertThat(c.receive(List.of(event("a", 1), event("b", 1), event("a", 2), event("a", 3))))
        .containsOnly(Received.APPLIED);
    // Another id for a sequence already applied (the same event appended again after the outbox
    // forgot it, say): behind, skipped.
    assertThat(c.receive(List.of(event("a", 2), event("b", 2))))
        .containsExactly(Received.DUPLICATE, Received.APPLIED);
    assertThat(applied("a")).containsExactly(1L, 2L, 3L);
    assertThat(applied("b")).containsExactly(1L, 2L);
  }

  /**
   * The first of an aggregate fails inside a batch: the batch goes on without it, its aggregate's
   * later message is answered FAILED untried (the transport delivers both again), the other
   * aggregate's message is applied.
   */
  @Test
  void aFailureInABatchHoldsBackOnlyItsOwnAggregate() throws Exception {
    AtomicBoolean broken = new AtomicBoolean(true);
    InboxConsumer c =
        consumer(ledger("ledger", e -> broken.get() && e.aggregateId().equals("bad"))).build();
    EventEnvelope bad1 = event("bad", 1);
    EventEnvelope bad2 = event("bad", 2);
    EventEnvelope good = event("good", 1);

    assertThat(c.receive(List.of(bad1, good, bad2)))
        .containsExactly(Received.FAILED, Received.APPLIED, Received.FAILED);
    assertThat(inbox("FAILED")).as("one attempt counted, on the one that failed").isEqualTo(1);
    assertThat(applied("good")).containsExactly(1L);

    broken.set(false);
    assertThat(c.receive(List.of(bad1, good, bad2)))
        .containsExactly(Received.APPLIED, Received.DUPLICATE, Received.APPLIED);
    assertThat(applied("bad")).containsExactly(1L, 2L);
  }

  /**
   * The same with a batch handler that cannot say which message failed: each message on its own, in
   * order, and the failed aggregate's later message answered FAILED untried.
   */
  @Test
  void anUnattributedFailureInABatchHoldsBackOnlyItsOwnAggregate() throws Exception {
    AtomicBoolean broken = new AtomicBoolean(true);
    MessageHandler rows = ledger("ledger", e -> broken.get() && e.aggregateId().equals("bad"));
    List<Integer> calls = new CopyOnWriteArrayList<>();
    MessageHandler batching =
        new MessageHandler() {
          @Override
          public void apply(Connection tx, EventEnvelope m) throws Exception {
            rows.apply(tx, m);
          }

          @Override
          public void applyAll(Connection tx, List<EventEnvelope> messages) throws Exception {
            calls.add(messages.size());
            for (EventEnvelope m : messages) {
              rows.apply(tx, m); // fails on "bad", without saying which
            }
          }
        };
    InboxConsumer c = consumer(batching).build();
    EventEnvelope bad1 = event("bad", 1);
    EventEnvelope bad2 = event("bad", 2);
    EventEnvelope good1 = event("good", 1);
    EventEnvelope good2 = event("good", 2);

    assertThat(c.receive(List.of(bad1, good1, bad2, good2)))
        .containsExactly(Received.FAILED, Received.APPLIED, Received.FAILED, Received.APPLIED);
    assertThat(calls)
        .as("the batch, then bad1, good1, good2 each alone")
        .containsExactly(4, 1, 1, 1);
    assertThat(inbox("FAILED")).as("one attempt counted, on the one that failed").isEqualTo(1);
    assertThat(applied("good")).containsExactly(1L, 2L);

    broken.set(false);
    assertThat(c.receive(List.of(bad1, bad2))).containsExactly(Received.APPLIED, Received.APPLIED);
    assertThat(applied("bad")).containsExactly(1L, 2L);
  }

  /**
   * A parked message holds its aggregate's later ones back; re-queued once fixed, it is applied and
   * releases them, in order.
   */
  @Test
  void aParkedMessageHoldsItsAggregateUntilRequeued() throws Exception {
    AtomicBoolean broken = new AtomicBoolean(true);
    InboxConsumer c =
        consumer(
                ledger(
                    "ledger",
                    e -> broken.get() && e.aggregateId().equals("a") && e.sequence() == 1))
            .maxAttempts(2)
            .build();
    EventEnvelope one = event("a", 1);

    assertThat(c.receive(one)).isEqualTo(Received.FAILED);
    assertThat(c.receive(List.of(one, event("a", 2), event("a", 3))))
        .containsExactly(Received.PARKED, Received.HELD, Received.HELD);
    assertThat(c.receive(event("b", 1))).isEqualTo(Received.APPLIED);
    assertThat(c.releaseHeld()).as("the gap is still open").isZero();
    assertThat(applied("a")).isEmpty();

    broken.set(false);
    assertThat(c.requeue(one.eventId())).isEqualTo(Received.APPLIED);
    assertThat(applied("a")).containsExactly(1L, 2L, 3L);
    assertThat(inbox("HELD")).isZero();
    assertThat(inbox("PARKED")).isZero();
  }

  /** A held message that fails once released stays held, its attempts counted, then parks. */
  @Test
  void aHeldMessageThatFailsWhenReleasedStaysHeldThenParks() throws Exception {
    InboxConsumer c = consumer(ledger("ledger", e -> e.sequence() == 2)).maxAttempts(2).build();
    assertThat(c.receive(event("a", 2))).isEqualTo(Received.HELD);
    assertThat(c.receive(event("a", 1))).isEqualTo(Received.APPLIED);

    assertThat(c.releaseHeld()).isZero();
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_inbox where status = 'HELD' and attempts = 1"))
        .isEqualTo(1);
    assertThat(c.releaseHeld()).isZero();
    assertThat(inbox("HELD")).isZero();
    assertThat(inbox("PARKED")).isEqualTo(1);
    assertThat(c.parked(10).get(0).message().sequence()).isEqualTo(2);
  }

  /**
   * Eight deliveries of one aggregate's 30 messages race, each on its own thread and connection, in
   * batches of 5: every sequence is applied once, in order.
   */
  @Test
  void racingDeliveriesApplyEachSequenceOnceAndInOrder() throws Exception {
    InboxConsumer c = consumer(ledger("ledger", e -> false)).build();
    List<EventEnvelope> events =
        IntStream.rangeClosed(1, 30).mapToObj(i -> event("race", i)).toList();
    int racers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (int r = 0; r < racers; r++) {
      done.add(
          pool.submit(
              () -> {
                go.await();
                for (int from = 0; from < events.size(); from += 5) {
                  c.receive(events.subList(from, from + 5));
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    c.releaseHeld();

    assertThat(applied("race"))
        .containsExactlyElementsOf(IntStream.rangeClosed(1, 30).mapToObj(i -> (long) i).toList());
  }

  @Test
  void firstSeenAcceptsWhateverComesFirst() throws Exception {
    InboxConsumer c =
        consumer(ledger("ledger", e -> false)).inSequence(SequenceStart.FIRST_SEEN).build();
    assertThat(c.receive(List.of(event("a", 7), event("a", 9), event("a", 8))))
        .containsExactly(Received.APPLIED, Received.HELD, Received.APPLIED);
    assertThat(c.releaseHeld()).isEqualTo(1);
    assertThat(applied("a")).containsExactly(7L, 8L, 9L);
  }

  /** The aggregates this consumer has a sequence row for. */
  private static List<String> sequenceRows() {
    List<String> out = new ArrayList<>();
    try (Connection c = TestPostgres.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "select aggregate_id from idemkit_inbox_sequence where consumer_name = 'ledger'"
                    + " order by aggregate_id")) {
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  /**
   * The inbox's cleanup also forgets the aggregates of a FIRST_SEEN consumer that nothing was
   * applied to within the retention (two days here), unless a message of theirs waits; what comes
   * after, for them or for a new aggregate, is applied in sequence.
   */
  @Test
  void cleanupForgetsAggregatesIdleForTheRetentionAndKeepsTheOthers() throws Exception {
    InboxConsumer c =
        consumer(ledger("ledger", e -> false)).inSequence(SequenceStart.FIRST_SEEN).build();
    assertThat(c.receive(List.of(event("old", 1), event("old", 2)))).containsOnly(Received.APPLIED);
    assertThat(c.receive(List.of(event("waiting", 1), event("waiting", 3))))
        .containsExactly(Received.APPLIED, Received.HELD);
    clock.advance(Duration.ofDays(2));
    assertThat(c.receive(event("recent", 1))).isEqualTo(Received.APPLIED);
    clock.advance(Duration.ofDays(1));
    assertThat(c.receive(event("now", 1))).isEqualTo(Received.APPLIED);

    assertThat(c.deleteProcessed()).as("the processed ids of day 0").isEqualTo(3);
    assertThat(sequenceRows()).containsExactly("now", "recent", "waiting");

    assertThat(c.receive(event("old", 3))).as("the first seen again").isEqualTo(Received.APPLIED);
    assertThat(c.receive(event("new", 1))).isEqualTo(Received.APPLIED);
    assertThat(c.receive(event("new", 3))).isEqualTo(Received.HELD);
    assertThat(c.receive(event("waiting", 2))).isEqualTo(Received.APPLIED);
    assertThat(c.receive(event("new", 2))).isEqualTo(Received.APPLIED);
    assertThat(c.releaseHeld()).isEqualTo(2);
    assertThat(applied("old")).containsExactly(1L, 2L, 3L);
    assertThat(applied("waiting")).containsExactly(1L, 2L, 3L);
    assertThat(applied("new")).containsExactly(1L, 2L, 3L);
    assertThat(sequenceRows()).containsExactly("new", "now", "old", "recent", "waiting");
  }

  /**
   * A row that a running batch holds is in use: the cleanup passes it by without waiting for the
   * batch, and forgets it at a later run.
   */
  @Test
  void cleanupPassesByARowABatchHolds() throws Exception {
    InboxConsumer c =
        consumer(ledger("ledger", e -> false)).inSequence(SequenceStart.FIRST_SEEN).build();
    c.receive(List.of(event("busy", 1), event("idle", 1)));
    clock.advance(Duration.ofDays(3));

    try (Connection batch = ds.getConnection()) {
      batch.setAutoCommit(false);
      try (PreparedStatement lock =
          batch.prepareStatement(
              "select 1 from idemkit_inbox_sequence where aggregate_id = 'busy' for update")) {
        lock.executeQuery().close();
      }
      ExecutorService cleanup = Executors.newSingleThreadExecutor();
      try {
        assertThat(cleanup.submit(c::deleteProcessed).get(30, TimeUnit.SECONDS)).isEqualTo(2);
      } finally {
        cleanup.shutdownNow();
      }
      assertThat(sequenceRows()).containsExactly("busy");
      batch.commit();
    }
    c.deleteProcessed();
    assertThat(sequenceRows()).isEmpty();
  }

  /**
   * A FROM_ONE consumer keeps every aggregate's row: an aggregate it forgot would hold its next
   * message for a sequence 1 that never comes again.
   */
  @Test
  void cleanupOfAConsumerFromOneKeepsItsSequenceRows() throws Exception {
    InboxConsumer c = consumer(ledger("ledger", e -> false)).build();
    c.receive(List.of(event("old", 1), event("old", 2)));
    clock.advance(Duration.ofDays(3));

    assertThat(c.deleteProcessed()).isEqualTo(2);
    assertThat(sequenceRows()).containsExactly("old");
    assertThat(c.receive(event("old", 3))).isEqualTo(Received.APPLIED);
    assertThat(c.receive(event("new", 1))).isEqualTo(Received.APPLIED);
    assertThat(applied("old")).containsExactly(1L, 2L, 3L);
  }
}
