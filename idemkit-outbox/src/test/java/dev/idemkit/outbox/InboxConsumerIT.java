package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.counting;
import static dev.idemkit.outbox.Fixtures.ledger;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inbox against a real PostgreSQL: duplicates, races, poison, retention. */
class InboxConsumerIT {

  private final DataSource ds = TestPostgres.dataSource();
  private final TestClock clock = new TestClock();
  private final Outbox outbox = Outbox.create(ds, clock);

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  private InboxConsumer.Builder consumer(String name, MessageHandler handler) {
    return InboxConsumer.builder(name, ds, handler)
        .clock(clock)
        .redeliveryHorizon(Duration.ofDays(1))
        .retention(Duration.ofDays(2));
  }

  private static long ledgerRows(String consumer) {
    return TestPostgres.count("select count(*) from test_ledger where consumer = ?", consumer);
  }

  @Test
  void aDuplicateIsAcknowledgedAndSkipped() {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 10)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> false)).build();

    assertThat(ledger.receive(m)).isEqualTo(Received.APPLIED);
    assertThat(ledger.receive(m)).isEqualTo(Received.DUPLICATE);
    assertThat(ledger.receive(List.of(m, m)))
        .containsExactly(Received.DUPLICATE, Received.DUPLICATE);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  @Test
  void aBatchAppliesEachMessageOnceAndADuplicateInsideItIsSkipped() {
    EventEnvelope a = appendCommitted(outbox, paymentCompleted("p1", 1)).event();
    EventEnvelope b = appendCommitted(outbox, paymentCompleted("p2", 1)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> false)).build();

    assertThat(ledger.receive(List.of(a, b, a)))
        .containsExactly(Received.APPLIED, Received.APPLIED, Received.DUPLICATE);
    assertThat(ledgerRows("ledger")).isEqualTo(2);
  }

  /** A failure in a batch costs nothing: the others apply on their own, the poison fails alone. */
  @Test
  void aFailureMarksNothingAndDoesNotTakeItsBatchDown() {
    EventEnvelope good = appendCommitted(outbox, paymentCompleted("good", 1)).event();
    EventEnvelope poison = appendCommitted(outbox, paymentCompleted("poison", 1)).event();
    InboxConsumer ledger =
        consumer("ledger", ledger("ledger", e -> e.aggregateId().equals("poison"))).build();

    assertThat(ledger.receive(List.of(good, poison)))
        .containsExactly(Received.APPLIED, Received.FAILED);
    assertThat(
            TestPostgres.count(
                "select count(*) from test_ledger where consumer = 'ledger' and payment_id = 'poison'"))
        .isZero();
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_inbox where message_id = ? and status = 'FAILED'"
                    + " and attempts = 1",
                poison.eventId()))
        .isEqualTo(1);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /**
   * A handler writing a whole batch at once ({@link MessageHandler#applyAll}): one call for the
   * batch; a failure it cannot pin on a message makes the inbox apply each on its own.
   */
  @Test
  void aBatchHandlerGetsTheBatchInOneCallAndAnUnattributedFailureFallsBackToOneByOne() {
    EventEnvelope a = appendCommitted(outbox, paymentCompleted("a", 1)).event();
    EventEnvelope poison = appendCommitted(outbox, paymentCompleted("poison", 1)).event();
    EventEnvelope b = appendCommitted(outbox, paymentCompleted("b", 1)).event();
    MessageHandler rows = ledger("ledger", e -> e.aggregateId().equals("poison"));
    List<Integer> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    MessageHandler batching =
        new MessageHandler() {
          @Override
          public void apply(java.sql.Connection tx, EventEnvelope m) throws Exception {
            rows.apply(tx, m);
          }

          @Override
          public void applyAll(java.sql.Connection tx, List<EventEnvelope> messages)
              throws Exception {
            calls.add(messages.size());
            for (EventEnvelope m : messages) {
              rows.apply(tx, m); // fails on the poison, without saying which
            }
          }
        };
    InboxConsumer ledger = consumer("ledger", batching).build();

    assertThat(ledger.receive(List.of(a, b))).containsOnly(Received.APPLIED);
    assertThat(calls).containsExactly(2);
    EventEnvelope c = appendCommitted(outbox, paymentCompleted("c", 1)).event();
    assertThat(ledger.receive(List.of(c, poison)))
        .containsExactly(Received.APPLIED, Received.FAILED);
    assertThat(calls).containsExactly(2, 2, 1, 1);
    assertThat(ledgerRows("ledger")).isEqualTo(3);
  }

  /**
   * A handler that catches an SQL error and goes on leaves PostgreSQL's transaction aborted: the
   * inbox takes it for the handler's failure (its rows rolled back, the attempt counted and told as
   * such, parked at the last attempt) instead of reporting the commit's refusal, and the rest of
   * the batch is applied.
   */
  @Test
  void aHandlerThatSwallowsAnSqlErrorFailsItsMessage() throws Exception {
    EventEnvelope good = appendCommitted(outbox, paymentCompleted("good", 1)).event();
    EventEnvelope bad = appendCommitted(outbox, paymentCompleted("swallows", 1)).event();
    MessageHandler rows = ledger("ledger", e -> false);
    MessageHandler swallowing =
        (tx, m) -> {
          rows.apply(tx, m);
          if (m.aggregateId().equals("swallows")) {
            try (java.sql.PreparedStatement s =
                tx.prepareStatement(
                    "insert into test_ledger (consumer, payment_id, amount) values (?, ?, null)")) {
              s.setString(1, "ledger");
              s.setString(2, m.aggregateId());
              s.executeUpdate();
            } catch (java.sql.SQLException notNullViolation) {
              // "optional row, never mind": the transaction is aborted all the same
            }
          }
        };
    InboxConsumer ledger = consumer("ledger", swallowing).maxAttempts(2).build();

    assertThat(ledger.receive(List.of(good, bad)))
        .containsExactly(Received.APPLIED, Received.FAILED);
    assertThat(inboxRows("ledger"))
        .containsExactlyInAnyOrder(good.eventId() + " PROCESSED", bad.eventId() + " FAILED");
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_inbox where message_id = ? and attempts = 1"
                    + " and last_error like '%handler returned but left the transaction aborted%'",
                bad.eventId()))
        .as("counted, and told as the handler's failure")
        .isEqualTo(1);
    assertThat(ledger.receive(bad)).isEqualTo(Received.PARKED);
    assertThat(ledger.parked(10).get(0).lastError()).contains("left the transaction aborted");
    assertThat(ledgerRows("ledger")).as("only the good one's row").isEqualTo(1);
  }

  /**
   * A handler that throws an {@link Error} fails its message like an exception: the rest of the
   * batch is applied, the attempt counted, the message parked at the last; and a relay delivering
   * to the consumer on the embedded transport goes on.
   */
  @Test
  void anErrorFromTheHandlerFailsItsMessageOnly() throws Exception {
    EventEnvelope good = appendCommitted(outbox, paymentCompleted("good", 1)).event();
    EventEnvelope bad = appendCommitted(outbox, paymentCompleted("asserts", 1)).event();
    MessageHandler rows = ledger("ledger", e -> false);
    MessageHandler asserting =
        (tx, m) -> {
          if (m.aggregateId().equals("asserts")) {
            throw new AssertionError("handler bug");
          }
          rows.apply(tx, m);
        };
    InboxConsumer ledger = consumer("ledger", asserting).maxAttempts(3).build();

    assertThat(ledger.receive(List.of(good, bad)))
        .containsExactly(Received.APPLIED, Received.FAILED);
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_inbox where message_id = ? and status = 'FAILED'"
                    + " and attempts = 1 and last_error like 'AssertionError: handler bug%'",
                bad.eventId()))
        .isEqualTo(1);

    OutboxRelay relay =
        OutboxRelay.builder(ds, EmbeddedTransport.create(Duration.ofDays(1)).subscribe(ledger))
            .clock(clock)
            .build();
    assertThat(relay.relayOnce())
        .as("sent good, failed the other")
        .isEqualTo(new OutboxRelay.Round(2, 1, 1, 0));
    assertThat(ledger.receive(bad)).isEqualTo(Received.PARKED);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /**
   * Closing a relay whose embedded transport is inside a consumer's handler (the interrupt cuts the
   * handler short) counts no attempt at the inbox either: no failed row, and the event, due as
   * before, is applied once by the next relay.
   */
  @Test
  void closingTheRelayWhileAHandlerRunsCountsNoAttemptAtTheInbox() throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 1)).event();
    CountDownLatch inHandler = new CountDownLatch(1);
    AtomicBoolean slow = new AtomicBoolean(true);
    MessageHandler rows = ledger("ledger", e -> false);
    MessageHandler waiting =
        (tx, e) -> {
          rows.apply(tx, e);
          if (slow.get()) {
            inHandler.countDown();
            new CountDownLatch(1).await(); // until interrupted
          }
        };
    InboxConsumer ledger = consumer("ledger", waiting).maxAttempts(1).build();
    EmbeddedTransport embedded = EmbeddedTransport.create(Duration.ofDays(1)).subscribe(ledger);
    OutboxRelay relay = OutboxRelay.builder(ds, embedded).clock(clock).maxAttempts(1).build();
    relay.start();
    assertThat(inHandler.await(60, TimeUnit.SECONDS)).isTrue();
    relay.close();

    assertThat(inboxRows("ledger")).as("no attempt recorded, nothing parked").isEmpty();
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox where attempts = 0"))
        .isEqualTo(1);
    slow.set(false);
    assertThat(OutboxRelay.builder(ds, embedded).clock(clock).build().relayOnce())
        .isEqualTo(new OutboxRelay.Round(1, 1, 0, 0));
    assertThat(inboxRows("ledger")).containsExactly(m.eventId() + " PROCESSED");
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /** Two consumers' names are two inboxes: each applies the message once. */
  @Test
  void eachConsumerNameHasItsOwnInbox() {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 1)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> false)).build();
    InboxConsumer receipts = consumer("receipts", ledger("receipts", e -> false)).build();

    assertThat(ledger.receive(m)).isEqualTo(Received.APPLIED);
    assertThat(receipts.receive(m)).isEqualTo(Received.APPLIED);
    assertThat(ledger.receive(m)).isEqualTo(Received.DUPLICATE);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
    assertThat(ledgerRows("receipts")).isEqualTo(1);
  }

  /**
   * 24 deliveries of the same message race, each on its own thread and connection, released
   * together; the handler is slow so they overlap inside the transaction. One applies it.
   */
  @Test
  void racingDeliveriesOfOneMessageApplyItOnce() throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p-race", 1)).event();
    MessageHandler slow =
        (tx, e) -> {
          Thread.sleep(50);
          ledger("ledger", x -> false).apply(tx, e);
        };
    InboxConsumer ledger = consumer("ledger", slow).build();
    int racers = 24;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Received>> outcomes = new ArrayList<>();
    for (int i = 0; i < racers; i++) {
      outcomes.add(
          pool.submit(
              () -> {
                go.await();
                return ledger.receive(m);
              }));
    }
    go.countDown();
    List<Received> all = new ArrayList<>();
    for (Future<Received> f : outcomes) {
      all.add(f.get(60, TimeUnit.SECONDS));
    }
    pool.shutdown();

    assertThat(all).filteredOn(r -> r == Received.APPLIED).hasSize(1);
    assertThat(all).filteredOn(r -> r == Received.DUPLICATE).hasSize(racers - 1);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /**
   * A poison message fails N times and is parked (acknowledged, so the transport moves on); the
   * operator sees it, the handler is fixed, the message is re-queued and applied once; a late
   * redelivery is then a duplicate.
   */
  @Test
  void aPoisonMessageIsParkedThenRequeuedAndAppliedOnce() throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("poison", 5)).event();
    AtomicBoolean broken = new AtomicBoolean(true);
    InboxConsumer ledger =
        consumer("ledger", ledger("ledger", e -> broken.get())).maxAttempts(3).build();

    assertThat(ledger.receive(m)).isEqualTo(Received.FAILED);
    assertThat(ledger.receive(m)).isEqualTo(Received.FAILED);
    assertThat(ledger.receive(m)).isEqualTo(Received.PARKED);
    assertThat(ledger.receive(m)).as("stays parked").isEqualTo(Received.PARKED);
    assertThat(ledger.parkedCount()).isEqualTo(1);
    List<InboxConsumer.ParkedMessage> parked = ledger.parked(10);
    assertThat(parked).hasSize(1);
    assertThat(parked.get(0).message()).isEqualTo(m);
    assertThat(parked.get(0).attempts()).isEqualTo(3);
    assertThat(parked.get(0).lastError()).contains("poison");
    assertThat(ledgerRows("ledger")).isZero();

    broken.set(false);
    assertThat(ledger.requeue(m.eventId())).isEqualTo(Received.APPLIED);
    assertThat(ledger.requeue(m.eventId())).as("nothing parked any more").isNull();
    assertThat(ledger.receive(m)).isEqualTo(Received.DUPLICATE);
    assertThat(ledger.parkedCount()).isZero();
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /**
   * On the embedded transport, a consumer that parks a message acknowledges it: the relay marks the
   * event sent and the aggregate's next event goes ahead. Without {@code inSequence} the consumer
   * applies it although the one before it is parked.
   */
  @Test
  void onTheEmbeddedTransportAMessageParkedInTheInboxLetsItsAggregatesLaterEventsBeApplied()
      throws Exception {
    InboxConsumer ledger = parkingFirstEventOfP1(consumer("ledger", poisonFirstOfP1()));

    assertThat(TestPostgres.count("select count(*) from idemkit_outbox where sent_at is null"))
        .as("both events sent")
        .isZero();
    assertThat(ledger.parkedCount()).isEqualTo(1);
    assertThat(
            TestPostgres.count(
                "select count(*) from test_ledger where consumer = 'ledger' and amount = 2"))
        .as("sequence 2 applied while sequence 1 is parked")
        .isEqualTo(1);
    assertThat(ledgerRows("ledger")).isEqualTo(1);
  }

  /**
   * The same with {@code inSequence}: the relay still goes on (a held message is acknowledged), but
   * the consumer holds the aggregate's later event until the parked one is re-queued.
   */
  @Test
  void onTheEmbeddedTransportInSequenceALaterEventIsHeldBehindAParkedOne() throws Exception {
    InboxConsumer ledger =
        parkingFirstEventOfP1(
            consumer("ledger", poisonFirstOfP1()).inSequence(SequenceStart.FROM_ONE));

    assertThat(TestPostgres.count("select count(*) from idemkit_outbox where sent_at is null"))
        .as("both events sent")
        .isZero();
    assertThat(ledgerRows("ledger")).as("sequence 2 held, not applied").isZero();
    assertThat(ledger.heldSummary().count()).isEqualTo(1);

    poisoned.set(false);
    assertThat(ledger.requeue(firstOfP1)).isEqualTo(Received.APPLIED);
    assertThat(
            TestPostgres.count(
                "select count(*) from test_ledger where consumer = 'ledger'"
                    + " and applied_order = (select min(applied_order) from test_ledger)"
                    + " and amount = 1"))
        .as("sequence 1 applied first")
        .isEqualTo(1);
    assertThat(ledgerRows("ledger")).isEqualTo(2);
  }

  private final AtomicBoolean poisoned = new AtomicBoolean(true);
  private UUID firstOfP1;

  private MessageHandler poisonFirstOfP1() {
    return ledger("ledger", e -> poisoned.get() && e.sequence() == 1);
  }

  /**
   * Appends two events of p1 and relays them on the embedded transport to a consumer (2 attempts)
   * whose handler fails on the first until it parks; answers the consumer.
   */
  private InboxConsumer parkingFirstEventOfP1(InboxConsumer.Builder builder) throws Exception {
    firstOfP1 = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    appendCommitted(
        outbox, new NewEvent("PaymentRefunded", "tenant-a", "payment", "p1", "refund:p1", "{}"));
    InboxConsumer consumer = builder.maxAttempts(2).build();
    OutboxRelay relay =
        OutboxRelay.builder(ds, EmbeddedTransport.create(Duration.ofDays(1)).subscribe(consumer))
            .clock(clock)
            .maxAttempts(10)
            .build();
    for (int i = 0; i < 4; i++) {
      relay.relayOnce();
      clock.advance(Duration.ofMinutes(1));
    }
    return consumer;
  }

  @Test
  void aRequeuedMessageThatFailsAgainIsParkedAgainAtOnce() throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("poison", 5)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> true)).maxAttempts(2).build();
    ledger.receive(m);
    ledger.receive(m);

    assertThat(ledger.requeue(m.eventId())).isEqualTo(Received.PARKED);
    assertThat(ledger.parkedCount()).isEqualTo(1);
  }

  @Test
  void refusesToStartWithARetentionNotBeyondTheRedeliveryHorizon() {
    MessageHandler h = ledger("ledger", e -> false);
    assertThatThrownBy(
            () ->
                InboxConsumer.builder("ledger", ds, h)
                    .retention(Duration.ofDays(7))
                    .redeliveryHorizon(EmbeddedTransport.DEFAULT_REDELIVERY_HORIZON)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refuses to start")
        .hasMessageContaining("PT168H");
    assertThatThrownBy(() -> InboxConsumer.builder("ledger", ds, h).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("redeliveryHorizon");
  }

  @Test
  void processedIdsAreForgottenAfterTheRetentionOnly() throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 1)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> false)).build();
    ledger.receive(m);

    clock.advance(Duration.ofDays(1));
    assertThat(ledger.deleteProcessed()).isZero();
    assertThat(ledger.receive(m)).isEqualTo(Received.DUPLICATE);
    clock.advance(Duration.ofDays(2));
    assertThat(ledger.deleteProcessed()).isEqualTo(1);
  }

  /**
   * The cleanup deletes in batches until nothing is due, passing by a row another transaction holds
   * instead of waiting for it (a consumer's batch, or another instance's cleanup), and touches
   * nothing but this consumer's processed ids past the retention: not a failed or parked message,
   * not a recent id, not another consumer's.
   */
  @Test
  void cleanupDeletesInBatchesAndPassesByARowAnotherTransactionHolds() throws Exception {
    InboxConsumer ledger =
        consumer("ledger", ledger("ledger", e -> e.aggregateId().startsWith("poison")))
            .maxAttempts(2)
            .build();
    EventEnvelope held = appendCommitted(outbox, paymentCompleted("held", 1)).event();
    EventEnvelope failed = appendCommitted(outbox, paymentCompleted("poison-1", 1)).event();
    EventEnvelope parked = appendCommitted(outbox, paymentCompleted("poison-2", 1)).event();
    assertThat(ledger.receive(List.of(held, failed, parked)))
        .containsExactly(Received.APPLIED, Received.FAILED, Received.FAILED);
    assertThat(ledger.receive(parked)).isEqualTo(Received.PARKED);
    // More processed ids of day 0 than two batches hold, and another consumer's.
    insertProcessed("ledger", 2_500);
    insertProcessed("shipping", 3);
    clock.advance(Duration.ofDays(3));
    EventEnvelope recent = appendCommitted(outbox, paymentCompleted("recent", 1)).event();
    assertThat(ledger.receive(recent)).isEqualTo(Received.APPLIED);

    try (java.sql.Connection other = ds.getConnection()) {
      other.setAutoCommit(false);
      try (java.sql.PreparedStatement lock =
          other.prepareStatement(
              "select 1 from idemkit_inbox where consumer_name = 'ledger' and message_id = ?"
                  + " for update")) {
        lock.setObject(1, held.eventId());
        lock.executeQuery().close();
      }
      ExecutorService cleanup = Executors.newSingleThreadExecutor();
      try {
        assertThat(cleanup.submit(ledger::deleteProcessed).get(30, TimeUnit.SECONDS))
            .isEqualTo(2_500);
      } finally {
        cleanup.shutdownNow();
      }
      other.commit();
    }
    assertThat(inboxRows("ledger"))
        .containsExactlyInAnyOrder(
            held.eventId() + " PROCESSED",
            recent.eventId() + " PROCESSED",
            failed.eventId() + " FAILED",
            parked.eventId() + " PARKED");
    assertThat(inboxRows("shipping")).hasSize(3);

    assertThat(ledger.deleteProcessed()).as("the row held before, now free").isEqualTo(1);
    assertThat(inboxRows("ledger"))
        .containsExactlyInAnyOrder(
            recent.eventId() + " PROCESSED",
            failed.eventId() + " FAILED",
            parked.eventId() + " PARKED");
    assertThat(ledgerRows("ledger")).as("what the handler applied stays").isEqualTo(2);
  }

  /** {@code count} ids that {@code consumer} processed now (by the test's clock). */
  private void insertProcessed(String consumer, int count) throws Exception {
    try (java.sql.Connection c = ds.getConnection();
        java.sql.PreparedStatement s =
            c.prepareStatement(
                """
                insert into idemkit_inbox (consumer_name, message_id, status, attempts,
                                           received_at, processed_at)
                select ?, gen_random_uuid(), 'PROCESSED', 0, ?, ? from generate_series(1, ?)
                """)) {
      java.time.OffsetDateTime now = clock.instant().atOffset(java.time.ZoneOffset.UTC);
      s.setString(1, consumer);
      s.setObject(2, now);
      s.setObject(3, now);
      s.setInt(4, count);
      s.executeUpdate();
    }
  }

  /** {@code consumer}'s inbox rows, as "message-id STATUS". */
  private List<String> inboxRows(String consumer) throws Exception {
    List<String> out = new ArrayList<>();
    try (java.sql.Connection c = ds.getConnection();
        java.sql.PreparedStatement s =
            c.prepareStatement(
                "select message_id, status from idemkit_inbox where consumer_name = ?")) {
      s.setString(1, consumer);
      try (java.sql.ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1) + " " + rs.getString(2));
        }
      }
    }
    return out;
  }

  /**
   * End to end through the embedded transport, with the crash between the consumer's commit and the
   * relay's mark simulated: the first acknowledgement is lost, so the relay sends the event again;
   * the consumer receives it twice and applies it once.
   */
  @Test
  void anAcknowledgementLostAfterTheConsumerCommittedMeansTwoDeliveriesOneEffect()
      throws Exception {
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 1)).event();
    InboxConsumer ledger = consumer("ledger", ledger("ledger", e -> false)).build();
    EmbeddedTransport embedded =
        EmbeddedTransport.create(Duration.ofDays(1)).subscribe(counting(ledger, ds));
    AtomicBoolean loseNextAnswer = new AtomicBoolean(true);
    RecordingTransport losing =
        new RecordingTransport() {
          @Override
          public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
            List<CompletionStage<Void>> acks = embedded.send(events);
            if (loseNextAnswer.getAndSet(false)) {
              return events.stream()
                  .map(
                      e ->
                          (CompletionStage<Void>)
                              CompletableFuture.<Void>failedFuture(
                                  new IllegalStateException("answer lost")))
                  .toList();
            }
            return acks;
          }
        };
    OutboxRelay relay = OutboxRelay.builder(ds, losing).clock(clock).build();

    relay.relayOnce();
    clock.advance(Duration.ofMinutes(1));
    relay.relayOnce();

    assertThat(
            TestPostgres.count(
                "select count(*) from test_received where message_id = ?", m.eventId()))
        .as("delivered twice")
        .isEqualTo(2);
    assertThat(ledgerRows("ledger")).as("applied once").isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox where sent_at is null"))
        .isZero();
  }
}
