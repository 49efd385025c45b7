package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Side effects outside the database: recorded first, delivered under their key, never twice. */
class DeliveriesIT {

  private final DataSource ds = TestPostgres.dataSource();
  private final TestClock clock = new TestClock();
  private final Deliveries deliveries = Deliveries.create(ds, clock);

  /**
   * A mail service that deduplicates on the idempotency key it is given, as a real one does: {@code
   * calls} counts requests, {@code delivered} counts mails actually sent per key.
   */
  static final class MailService implements DeliverySender.Receiver {
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> delivered = new ConcurrentHashMap<>();
    volatile boolean dropAnswerAfterAccepting;
    volatile boolean down;

    @Override
    public void deliver(String key, String payload) throws Exception {
      calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      if (down) {
        throw new java.io.IOException("503 Service Unavailable");
      }
      delivered.computeIfAbsent(key, k -> new AtomicInteger()).compareAndSet(0, 1);
      if (dropAnswerAfterAccepting) {
        throw new java.io.IOException("connection reset after the request was accepted");
      }
    }
  }

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  private void record(String key) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      deliveries.record(c, key, "mail", "{\"to\":\"a@example.test\"}");
      c.commit();
    }
  }

  private DeliverySender.Builder sender(DeliverySender.Receiver mail) {
    return DeliverySender.builder(ds, "mail", mail)
        .clock(clock)
        .backoff(Duration.ofSeconds(1), Duration.ofSeconds(30));
  }

  @Test
  void recordingTheSameKeyTwiceKeepsOneIntent() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(deliveries.record(c, "receipt_payment_p1", "mail", "{}")).isTrue();
      assertThat(deliveries.record(c, "receipt_payment_p1", "mail", "{}")).isFalse();
      c.commit();
    }
    assertThat(TestPostgres.count("select count(*) from idemkit_delivery")).isEqualTo(1);
  }

  @Test
  void anAnswerDroppedAfterTheReceiverAcceptedIsRetriedWithTheSameKeyAndDeliveredOnce()
      throws Exception {
    record("receipt_payment_p1");
    MailService mail = new MailService();
    mail.dropAnswerAfterAccepting = true;
    DeliverySender sender = sender(mail).build();

    assertThat(sender.deliverOnce().failed()).isEqualTo(1);
    assertThat(deliveries.find("receipt_payment_p1").orElseThrow().status()).isEqualTo("PENDING");
    mail.dropAnswerAfterAccepting = false;
    clock.advance(Duration.ofSeconds(1));
    assertThat(sender.deliverOnce().delivered()).isEqualTo(1);

    assertThat(mail.calls.get("receipt_payment_p1")).hasValue(2);
    assertThat(mail.delivered.get("receipt_payment_p1")).hasValue(1);
    assertThat(deliveries.find("receipt_payment_p1").orElseThrow().status()).isEqualTo("DELIVERED");
    assertThat(sender.deliverOnce().picked()).isZero();
  }

  /**
   * The sender dies after the receiver accepted and before its transaction committed (its database
   * session is terminated, as the process ending would leave it): the intent is still pending, is
   * sent again with the same key, and the receiving end has one mail.
   */
  @Test
  void aCrashBetweenSendingAndMarkingNeverDeliversTwiceAtTheReceivingEnd() throws Exception {
    record("receipt_payment_p2");
    MailService mail = new MailService();
    AtomicInteger crashes = new AtomicInteger(1);
    DeliverySender crashing =
        sender(
                (key, payload) -> {
                  mail.deliver(key, payload);
                  if (crashes.getAndDecrement() > 0) {
                    TestPostgres.execute(
                        """
                        select pg_terminate_backend(pid) from pg_stat_activity
                         where state = 'idle in transaction' and pid <> pg_backend_pid()
                           and query like '%from idemkit_delivery%'
                        """);
                  }
                })
            .build();

    // The driver's failure on the ended session propagates (its type depends on the statement
    // under way), with the rollback's, which the ended session fails too, attached.
    assertThatThrownBy(crashing::deliverOnce)
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .hasAtLeastOneElementOfType(java.sql.SQLException.class));
    assertThat(deliveries.find("receipt_payment_p2").orElseThrow())
        .extracting(Deliveries.Delivery::status, Deliveries.Delivery::attempts)
        .containsExactly("PENDING", 0);
    assertThat(sender(mail).build().deliverOnce().delivered()).isEqualTo(1);

    assertThat(mail.calls.get("receipt_payment_p2")).hasValue(2);
    assertThat(mail.delivered.get("receipt_payment_p2")).hasValue(1);
  }

  /**
   * A receiver that throws an {@link Error} (a bug in the client, a stack overflow) fails that
   * delivery like an exception: the attempt is counted, the round's other deliveries go through, it
   * is parked at the last attempt; and a running sender's thread goes on to deliver it later.
   */
  @Test
  void anErrorFromTheReceiverFailsThatDeliveryOnlyAndTheSenderGoesOn() throws Exception {
    record("receipt_payment_e1");
    record("receipt_payment_e2");
    MailService mail = new MailService();
    AtomicInteger errors = new AtomicInteger(1);
    DeliverySender.Receiver buggy =
        (key, payload) -> {
          if (key.equals("receipt_payment_e1") && errors.getAndDecrement() > 0) {
            throw new StackOverflowError();
          }
          mail.deliver(key, payload);
        };
    try (DeliverySender running = sender(buggy).pollInterval(Duration.ofMillis(5)).build()) {
      running.start();
      OutboxRelayIT.awaitCondition(() -> mail.delivered.containsKey("receipt_payment_e2"));
      OutboxRelayIT.awaitCondition(
          () ->
              TestPostgres.count(
                      "select count(*) from idemkit_delivery where delivery_key = ? and attempts = 1"
                          + " and status = 'PENDING' and last_error like 'StackOverflowError%'",
                      "receipt_payment_e1")
                  == 1);
      clock.advance(Duration.ofSeconds(1)); // the backoff after the failed attempt
      OutboxRelayIT.awaitCondition(() -> mail.delivered.containsKey("receipt_payment_e1"));
    }

    record("receipt_payment_e3");
    errors.set(Integer.MAX_VALUE);
    DeliverySender.Receiver alwaysBuggy =
        (key, payload) -> {
          throw new AssertionError("client bug");
        };
    DeliverySender parking = sender(alwaysBuggy).maxAttempts(2).build();
    assertThat(parking.deliverOnce()).isEqualTo(new DeliverySender.Round(1, 0, 1));
    clock.advance(Duration.ofMinutes(1));
    assertThat(parking.deliverOnce()).isEqualTo(new DeliverySender.Round(1, 0, 1));
    assertThat(deliveries.parked(10))
        .extracting(Deliveries.Delivery::key, Deliveries.Delivery::attempts)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("receipt_payment_e3", 2));
  }

  /**
   * Closing the sender while the receiver is still working on a delivery (an HTTP call the
   * interrupt cuts short) counts no attempt: the delivery stays pending and due, here one attempt
   * from parking, and the next sender delivers it.
   */
  @Test
  void closingTheSenderWhileADeliveryIsInFlightCountsNoAttempt() throws Exception {
    record("receipt_payment_c1");
    java.time.Instant recordedAt = clock.instant();
    CountDownLatch inFlight = new CountDownLatch(1);
    DeliverySender.Receiver slow =
        (key, payload) -> {
          inFlight.countDown();
          new CountDownLatch(1).await(); // until interrupted
        };
    DeliverySender sender = sender(slow).maxAttempts(1).build();
    sender.start();
    assertThat(inFlight.await(60, TimeUnit.SECONDS)).isTrue();
    sender.close();

    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_delivery where delivery_key = ?"
                    + " and status = 'PENDING' and attempts = 0 and next_attempt_at = ?",
                "receipt_payment_c1",
                recordedAt.atOffset(java.time.ZoneOffset.UTC)))
        .as("no attempt counted, not parked, still due")
        .isEqualTo(1);
    MailService mail = new MailService();
    assertThat(sender(mail).build().deliverOnce()).isEqualTo(new DeliverySender.Round(1, 1, 0));
  }

  @Test
  void aDeliveryFailingNTimesIsParkedAndDeliveredOnceWhenRequeued() throws Exception {
    record("receipt_payment_p3");
    MailService mail = new MailService();
    mail.down = true;
    DeliverySender sender = sender(mail).maxAttempts(3).build();
    for (int i = 0; i < 3; i++) {
      sender.deliverOnce();
      clock.advance(Duration.ofMinutes(1));
    }
    assertThat(sender.deliverOnce().picked()).isZero();
    assertThat(deliveries.parked(10))
        .extracting(Deliveries.Delivery::key)
        .containsExactly("receipt_payment_p3");

    mail.down = false;
    assertThat(deliveries.requeue("receipt_payment_p3")).isTrue();
    assertThat(sender.deliverOnce().delivered()).isEqualTo(1);
    assertThat(mail.delivered.get("receipt_payment_p3")).hasValue(1);
    assertThat(deliveries.parked(10)).isEmpty();
  }

  /**
   * The parked count is every parked delivery, of every channel, beyond any listing's limit; and it
   * comes from the parked rows' index, not a scan of every delivery.
   */
  @Test
  void theParkedCountCountsEveryParkedDelivery() throws Exception {
    TestPostgres.execute(
        """
        insert into idemkit_delivery (delivery_key, channel, payload, status, attempts, created_at,
                                      next_attempt_at)
        select 'k' || i, case when i % 2 = 0 then 'mail' else 'webhook' end, '{}',
               case when i <= 1500 then 'PARKED' when i <= 1600 then 'PENDING' else 'DELIVERED' end,
               10, now(), now()
          from generate_series(1, 20000) as i;
        analyze idemkit_delivery;
        """);

    assertThat(deliveries.parkedCount()).isEqualTo(1500);
    assertThat(deliveries.parked(1000)).hasSize(1000);
    assertThat(TestPostgres.plan("select count(*) from idemkit_delivery where status = 'PARKED'"))
        .contains("idemkit_delivery_parked_ix");
    assertThat(
            TestPostgres.plan(
                "select delivery_key from idemkit_delivery where status = 'PARKED'"
                    + " order by created_at, delivery_key limit 100"))
        .contains("idemkit_delivery_parked_ix")
        .doesNotContain("Sort");
    assertThat(deliveries.requeue("k1")).isTrue();
    assertThat(deliveries.parkedCount()).isEqualTo(1499);
  }

  /** Four senders race over 200 intents: each is requested from the receiver exactly once. */
  @Test
  void concurrentSendersNeverShareADelivery() throws Exception {
    for (int i = 0; i < 200; i++) {
      record("k" + i);
    }
    MailService mail = new MailService();
    DeliverySender sender = sender(mail).batchSize(10).build();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      done.add(
          pool.submit(
              () -> {
                go.await();
                while (TestPostgres.count(
                        "select count(*) from idemkit_delivery where status = 'PENDING'")
                    > 0) {
                  sender.deliverOnce();
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(2, TimeUnit.MINUTES);
    }
    pool.shutdown();
    assertThat(mail.calls).hasSize(200);
    assertThat(mail.calls.values()).allSatisfy(n -> assertThat(n).hasValue(1));
  }
}
