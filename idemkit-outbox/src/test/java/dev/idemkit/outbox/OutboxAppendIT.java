package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Appending: derived ids, one row per logical event, numbers in commit order without gaps. */
class OutboxAppendIT {

  private final Outbox outbox = Outbox.create(TestPostgres.dataSource(), new TestClock());

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  @Test
  void theSameLogicalEventAppendedTwiceKeepsItsIdAndOneRow() {
    Outbox.Appended first = appendCommitted(outbox, paymentCompleted("p1", 100));
    Outbox.Appended again = appendCommitted(outbox, paymentCompleted("p1", 100));
    Outbox.Appended next =
        appendCommitted(
            outbox,
            new NewEvent("PaymentRefunded", "tenant-a", "payment", "p1", "refund:p1", "{}"));

    assertThat(again.duplicate()).isTrue();
    assertThat(again.event()).isEqualTo(first.event());
    assertThat(first.event().eventId())
        .isEqualTo(EventIds.derive("tenant-a", "complete:p1", "PaymentCompleted"));
    assertThat(next.event().sequence()).as("the duplicate took no number").isEqualTo(2);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(2);
  }

  @Test
  void derivedIdsAreNameBasedAndDistinguishTheirParts() {
    UUID id = EventIds.derive("t", "k", "PaymentCompleted");
    assertThat(id.version()).isEqualTo(5);
    assertThat(EventIds.derive("t", "k", "PaymentCompleted")).isEqualTo(id);
    assertThat(EventIds.derive("t", "k", "PaymentDeclined")).isNotEqualTo(id);
    assertThat(EventIds.derive("t1", "", "x")).isNotEqualTo(EventIds.derive("t", "1", "x"));
  }

  /** 32 transactions append the same event at once, each on its own connection: one row. */
  @Test
  void racingAppendsOfOneEventLeaveOneRow() throws Exception {
    int racers = 32;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Outbox.Appended>> results = new ArrayList<>();
    for (int i = 0; i < racers; i++) {
      results.add(
          pool.submit(
              () -> {
                go.await();
                return appendCommitted(outbox, paymentCompleted("p-race", 5));
              }));
    }
    go.countDown();
    int fresh = 0;
    for (Future<Outbox.Appended> f : results) {
      Outbox.Appended a = f.get(60, TimeUnit.SECONDS);
      assertThat(a.event().sequence()).isEqualTo(1);
      fresh += a.duplicate() ? 0 : 1;
    }
    pool.shutdown();
    assertThat(fresh).isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(1);
    assertThat(
            TestPostgres.count(
                "select last_sequence from idemkit_outbox_aggregate where aggregate_id = 'p-race'"))
        .isEqualTo(1);
  }

  @Test
  void aRolledBackAppendGivesItsNumberBack() throws Exception {
    try (Connection c = TestPostgres.dataSource().getConnection()) {
      c.setAutoCommit(false);
      outbox.append(c, paymentCompleted("p2", 1));
      c.rollback();
    }
    Outbox.Appended a = appendCommitted(outbox, paymentCompleted("p2", 1));
    assertThat(a.duplicate()).isFalse();
    assertThat(a.event().sequence()).isEqualTo(1);
  }

  /**
   * A transaction that appended to an aggregate holds its number until it ends; a second one
   * appending to the same aggregate waits, then numbers after it: numbers follow commit order.
   */
  @Test
  void aSecondAppendToAnAggregateWaitsForTheFirstAndNumbersAfterIt() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection first = TestPostgres.dataSource().getConnection()) {
      first.setAutoCommit(false);
      outbox.append(
          first, new NewEvent("OrderCreated", "tenant-a", "order", "o1", "create:o1", "{}"));
      Future<Outbox.Appended> second =
          pool.submit(
              () ->
                  appendCommitted(
                      outbox,
                      new NewEvent("OrderPaid", "tenant-a", "order", "o1", "pay:o1", "{}")));
      Thread.sleep(300);
      assertThat(second).as("waits on the first transaction's counter lock").isNotDone();
      first.commit();
      assertThat(second.get(30, TimeUnit.SECONDS).event().sequence()).isEqualTo(2);
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void appendRefusesAnAutoCommitConnection() throws Exception {
    try (Connection c = TestPostgres.dataSource().getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> outbox.append(c, paymentCompleted("p3", 1)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("caller's transaction");
    }
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isZero();
  }

  @Test
  void twoDifferentEventsGivenTheSameCauseKeyAreRefused() {
    appendCommitted(outbox, paymentCompleted("p4", 1));
    NewEvent clash =
        new NewEvent("PaymentCompleted", "tenant-a", "payment", "p5", "complete:p4", "{}");
    assertThatThrownBy(() -> appendCommitted(outbox, clash))
        .hasRootCauseInstanceOf(IllegalStateException.class)
        .hasStackTraceContaining("cause key of its own");
  }

  @Test
  void envelopeHeadersRoundTrip() {
    EventEnvelope e = appendCommitted(outbox, paymentCompleted("p6", 7)).event();
    assertThat(EventEnvelope.fromHeaders(e.headers(), e.payload())).isEqualTo(e);
    assertThat(e.partitionKey()).isEqualTo("p6");
  }
}
