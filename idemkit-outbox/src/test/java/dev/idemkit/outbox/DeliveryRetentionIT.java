package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Delivered rows are deleted after the sender's delivered retention, in bounded batches, by any
 * number of cleanups at once; pending and parked ones stay whatever their age.
 */
class DeliveryRetentionIT {

  private static final Duration RETENTION = Duration.ofDays(14);

  private final DataSource ds = TestPostgres.dataSource();
  private final TestClock clock = new TestClock();
  private final Deliveries deliveries = Deliveries.create(ds, clock);
  private final DeliveriesIT.MailService mail = new DeliveriesIT.MailService();

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  private void record(String channel, String... keys) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (String key : keys) {
        deliveries.record(c, key, channel, "{\"to\":\"a@example.test\"}");
      }
      c.commit();
    }
  }

  private DeliverySender.Builder sender(String channel, DeliverySender.Receiver receiver) {
    return DeliverySender.builder(ds, channel, receiver)
        .clock(clock)
        .batchSize(5000)
        .deliveredRetention(RETENTION);
  }

  private DeliverySender mailSender() {
    return sender("mail", mail).build();
  }

  private static String[] keys(String prefix, int n) {
    String[] keys = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = prefix + i;
    }
    return keys;
  }

  private static List<String> remainingKeys() throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = TestPostgres.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("select delivery_key from idemkit_delivery order by delivery_key")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /**
   * Old and recent deliveries of every state, on two channels: parked and pending ones from the
   * start (T0), delivered ones at T0 (on "mail" and "sms"), T0 + 2 days and T0 + 15 days; the clock
   * is then at T0 + 15 days.
   */
  private void deliveriesOfEveryStateAndAge() throws Exception {
    record("mail", "park-1");
    DeliverySender.Receiver down =
        (key, payload) -> {
          throw new java.io.IOException("503");
        };
    sender("mail", down).maxAttempts(1).build().deliverOnce();
    record("mail", "old-1", "old-2", "old-3");
    record("sms", "sms-old-1");
    mailSender().deliverOnce();
    sender("sms", mail).build().deliverOnce();
    record("mail", "pend-1");
    // Fails once, not due again for 30 days: pending throughout.
    sender("mail", down).backoff(Duration.ofDays(30), Duration.ofDays(30)).build().deliverOnce();
    clock.advance(Duration.ofDays(2));
    record("mail", "inside-1");
    mailSender().deliverOnce();
    clock.advance(Duration.ofDays(13));
    record("mail", "recent-1");
    mailSender().deliverOnce();
    assertThat(
            TestPostgres.count("select count(*) from idemkit_delivery where status = 'DELIVERED'"))
        .isEqualTo(6);
    assertThat(TestPostgres.count("select count(*) from idemkit_delivery where status = 'PARKED'"))
        .isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_delivery where status = 'PENDING'"))
        .isEqualTo(1);
  }

  @Test
  void deliveredRowsPastTheRetentionGoAndNothingElseDoes() throws Exception {
    deliveriesOfEveryStateAndAge();

    assertThat(mailSender().deleteDelivered()).isEqualTo(3);

    // The sms channel's old row is its own sender's to delete; pending and parked rows stay.
    assertThat(remainingKeys())
        .containsExactly("inside-1", "park-1", "pend-1", "recent-1", "sms-old-1");

    clock.advance(Duration.ofDays(365));
    assertThat(mailSender().deleteDelivered()).isEqualTo(2);
    assertThat(sender("sms", mail).build().deleteDelivered()).isEqualTo(1);
    assertThat(remainingKeys()).containsExactly("park-1", "pend-1");
    assertThat(mailSender().deleteDelivered()).isZero();
  }

  @Test
  void aBatchDeletesAtMostItsLimitAndARunGoesOnPastFullBatches() throws Exception {
    record("mail", keys("a-", 25));
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    DeliverySender sender = mailSender();

    assertThat(sender.deleteDeliveredBatch(10)).isEqualTo(10);
    assertThat(TestPostgres.count("select count(*) from idemkit_delivery")).isEqualTo(15);
    assertThat(sender.deleteDeliveredBatch(10)).isEqualTo(10);
    assertThat(sender.deleteDeliveredBatch(10)).isEqualTo(5);
    assertThat(sender.deleteDeliveredBatch(10)).isZero();

    // More than one batch of the run (1,000 rows): the run goes on until a batch is not full.
    record("mail", keys("b-", 2500));
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    assertThat(sender.deleteDelivered()).isEqualTo(2500);
    assertThat(TestPostgres.count("select count(*) from idemkit_delivery")).isZero();
  }

  @Test
  void aBatchReadsTheDeliveredRowsOwnIndex() throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute("set local enable_seqscan = off");
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs =
          s.executeQuery(
              """
              explain select delivery_key from idemkit_delivery
               where channel = 'mail' and status = 'DELIVERED' and delivered_at < now()
               order by delivered_at limit 1000 for update skip locked
              """)) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      c.rollback();
      assertThat(plan.toString()).contains("idemkit_delivery_delivered_ix");
    }
  }

  @Test
  void aRowAnotherTransactionHoldsIsPassedByNotWaitedFor() throws Exception {
    record("mail", keys("k-", 5));
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    try (Connection holder = ds.getConnection()) {
      holder.setAutoCommit(false);
      try (PreparedStatement s =
          holder.prepareStatement(
              "select 1 from idemkit_delivery where delivery_key = 'k-0' for update")) {
        s.executeQuery().close();
      }
      int deleted =
          assertTimeoutPreemptively(Duration.ofSeconds(10), mailSender()::deleteDelivered);
      assertThat(deleted).isEqualTo(4);
      assertThat(remainingKeys()).containsExactly("k-0");
      holder.commit();
    }
    assertThat(mailSender().deleteDelivered()).isEqualTo(1);
    assertThat(remainingKeys()).isEmpty();
  }

  @Test
  void twoCleanupsRacingDeleteEachOldRowOnceAndNothingElse() throws Exception {
    deliveriesOfEveryStateAndAge();
    // Delivered at T0 + 15 days, deleted at T0 + 15 days + the retention + 1 s: old by then, as
    // the others delivered before it; recent-2 is delivered just before the race.
    record("mail", keys("race-", 3000));
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    record("mail", "recent-2");
    mailSender().deliverOnce();
    DeliverySender one = mailSender();
    DeliverySender two = mailSender();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Integer>> counts = new ArrayList<>();
      for (DeliverySender cleaner : List.of(one, two)) {
        counts.add(
            pool.submit(
                () -> {
                  go.await();
                  int deleted = 0;
                  int batch;
                  do {
                    batch = cleaner.deleteDeliveredBatch(10);
                    deleted += batch;
                  } while (batch > 0);
                  return deleted;
                }));
      }
      go.countDown();
      int first = counts.get(0).get(60, TimeUnit.SECONDS);
      int second = counts.get(1).get(60, TimeUnit.SECONDS);
      // Old: old-1..3, inside-1, recent-1 and the 3,000 race rows; each deleted by one of them.
      assertThat(first + second).isEqualTo(3005);
      // Both took part (300 batches of 10 between them): a race, not one after the other.
      assertThat(first).isPositive();
      assertThat(second).isPositive();
    } finally {
      pool.shutdownNow();
    }
    assertThat(remainingKeys()).containsExactly("park-1", "pend-1", "recent-2", "sms-old-1");
  }

  @Test
  void theSendersThreadDeletesDeliveredRowsPastTheRetentionWhenItStarts() throws Exception {
    deliveriesOfEveryStateAndAge();
    try (DeliverySender sender = mailSender().start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (TestPostgres.count("select count(*) from idemkit_delivery") > 5
          && System.nanoTime() < deadline) {
        Thread.sleep(20); // waiting for the thread's first cleanup, not moving time
      }
    }
    assertThat(remainingKeys())
        .containsExactly("inside-1", "park-1", "pend-1", "recent-1", "sms-old-1");
  }

  @Test
  void theSendersThreadDeletesABacklogOneBatchBetweenTwoRoundsSoMailsAreNotHeldBack()
      throws Exception {
    record("mail", keys("old-", 2500));
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    record("mail", "new-1");
    // The receiver notes how many old rows are left when the new mail is delivered.
    java.util.concurrent.atomic.AtomicLong oldLeft = new java.util.concurrent.atomic.AtomicLong(-1);
    DeliverySender.Receiver noting =
        (key, payload) ->
            oldLeft.set(
                TestPostgres.count(
                    "select count(*) from idemkit_delivery where delivery_key like 'old-%'"));
    try (DeliverySender sender = sender("mail", noting).build().start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (TestPostgres.count("select count(*) from idemkit_delivery") > 1
          && System.nanoTime() < deadline) {
        Thread.sleep(20); // waiting for the thread, not moving time
      }
    }
    // Its first round came after one batch of 1,000: the other 1,500 waited for later rounds.
    assertThat(oldLeft.get()).isEqualTo(1500);
    assertThat(remainingKeys()).containsExactly("new-1");
  }

  /**
   * A consumer records keys again while a cleanup deletes their old rows: each record either finds
   * the delivered row (a duplicate, and the row then goes) or comes after its deletion (a new
   * pending delivery, kept); none fails, none is lost.
   */
  @Test
  void recordingAKeyAgainWhileACleanupDeletesItsRowIsEitherADuplicateOrANewDelivery()
      throws Exception {
    String[] keys = keys("k-", 2000);
    record("mail", keys);
    mailSender().deliverOnce();
    clock.advance(RETENTION.plusSeconds(1));
    DeliverySender cleaner = mailSender();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<String> recordedAsNew = new ArrayList<>();
    try {
      Future<Integer> cleanup =
          pool.submit(
              () -> {
                go.await();
                int deleted = 0;
                int batch;
                do {
                  batch = cleaner.deleteDeliveredBatch(10);
                  deleted += batch;
                } while (batch > 0);
                return deleted;
              });
      Future<List<String>> recorder =
          pool.submit(
              () -> {
                List<String> fresh = new ArrayList<>();
                go.await();
                for (String key : keys) {
                  try (Connection c = ds.getConnection()) {
                    c.setAutoCommit(false);
                    if (deliveries.record(c, key, "mail", "{}")) {
                      fresh.add(key);
                    }
                    c.commit();
                  }
                }
                return fresh;
              });
      go.countDown();
      recordedAsNew.addAll(recorder.get(60, TimeUnit.SECONDS));
      cleanup.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    // Whatever the cleanup had not reached yet when recorded was a duplicate, and goes now.
    mailSender().deleteDelivered();
    assertThat(recordedAsNew).isNotEmpty();
    assertThat(remainingKeys()).containsExactlyInAnyOrderElementsOf(recordedAsNew);
    assertThat(
            TestPostgres.count("select count(*) from idemkit_delivery where status <> 'PENDING'"))
        .isZero();
  }

  @Test
  void aKeyIsADuplicateWhileItsRowIsKeptAndANewDeliveryUnderTheSameKeyAfter() throws Exception {
    record("mail", "receipt_payment_p1");
    DeliverySender sender = mailSender();
    assertThat(sender.deliverOnce().delivered()).isEqualTo(1);

    clock.advance(RETENTION.minusSeconds(1));
    assertThat(sender.deleteDelivered()).isZero();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(deliveries.record(c, "receipt_payment_p1", "mail", "{}")).isFalse();
      c.commit();
    }
    assertThat(sender.deliverOnce().picked()).isZero();
    assertThat(mail.calls.get("receipt_payment_p1").get()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(2));
    assertThat(sender.deleteDelivered()).isEqualTo(1);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(deliveries.record(c, "receipt_payment_p1", "mail", "{}")).isTrue();
      c.commit();
    }
    // A new delivery, sent again under the same key: the receiver's memory of the key is now all
    // that keeps the effect single (this one deduplicates, as a mail service does).
    assertThat(sender.deliverOnce().delivered()).isEqualTo(1);
    assertThat(mail.calls.get("receipt_payment_p1").get()).isEqualTo(2);
    assertThat(mail.delivered.get("receipt_payment_p1").get()).isEqualTo(1);
  }
}
