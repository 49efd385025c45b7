package dev.idemkit.outbox;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.jdbc.Transactions;
import dev.idemkit.support.Backoff;
import dev.idemkit.support.PollingWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Delivers the side effects {@link Deliveries#record recorded} on one channel.
 *
 * <p>A {@link #deliverOnce() round} locks up to a batch of due deliveries ({@code FOR UPDATE SKIP
 * LOCKED}: several senders never hold the same one), calls the {@link Receiver} for each with the
 * delivery's key as the idempotency key, and in the same transaction marks each delivered, or
 * counts a failure (backoff, parked after the last allowed attempt). If the process dies after the
 * receiver accepted and before the commit, the delivery is still pending and is sent again, with
 * the same key: the receiver answers from its own record of that key, and delivers nothing twice.
 *
 * <p>Delivered rows are kept for the {@link Builder#deliveredRetention delivered retention}, then
 * {@link #deleteDelivered deleted}: while its row is kept, recording the same key again changes
 * nothing; once it is gone, the same key recorded again is a new delivery, sent again under that
 * key (the receiver's own memory of the key is then all that stops a second effect). The sender's
 * thread runs the cleanup from when it starts, one batch between two rounds, and every minute once
 * nothing is due (see {@link #start}).
 */
public final class DeliverySender implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(DeliverySender.class.getName());

  /** The receiving system (a mail service). */
  @FunctionalInterface
  public interface Receiver {
    /**
     * Delivers {@code payload}, passing {@code idempotencyKey} to the receiving system so that it
     * acts once per key however often it is called. Returns once the receiver accepted it; throws
     * if it did not (or if its answer was lost: the delivery is retried with the same key).
     */
    void deliver(String idempotencyKey, String payload) throws Exception;
  }

  private static final String PICK =
      """
      select delivery_key, payload, attempts
        from idemkit_delivery
       where channel = ? and status = 'PENDING' and next_attempt_at <= ?
       order by next_attempt_at
       limit ?
         for update skip locked
      """;

  private static final String MARK_DELIVERED =
      """
      update idemkit_delivery
         set status = 'DELIVERED', delivered_at = ?, attempts = attempts + 1, last_error = null
       where delivery_key = ?
      """;

  private static final String MARK_FAILED =
      """
      update idemkit_delivery
         set attempts = attempts + 1,
             last_error = ?,
             next_attempt_at = ?,
             status = case when attempts + 1 >= ? then 'PARKED' else 'PENDING' end
       where delivery_key = ?
      """;

  /**
   * Deletes up to a batch of this channel's rows delivered before the cutoff, read oldest first
   * from their own partial index ({@code idemkit_delivery_delivered_ix}), so a batch reads its own
   * rows only. {@code SKIP LOCKED}: two cleanups (two senders, two instances) take different rows
   * instead of one waiting for the other, and a row another transaction holds is passed by (a later
   * run deletes it). A delivered row never changes again (marking touches only rows locked while
   * pending, {@link Deliveries#requeue} only parked ones, and recording its key again does
   * nothing), so a row locked here is still one to delete; the status is checked again all the
   * same.
   *
   * <p>The race, a consumer recording the same key while a batch deletes its row: the consumer's
   * insert ({@code ON CONFLICT DO NOTHING}) meets the row the batch is deleting, waits for the
   * batch's commit and then inserts: a new delivery, as if it had come just after the cleanup (the
   * row was past the retention either way). Had it come just before, it changed nothing and the
   * batch deletes the row as it was.
   */
  private static final String DELETE_DELIVERED =
      """
      delete from idemkit_delivery
       where status = 'DELIVERED' and delivery_key in (
             select delivery_key from idemkit_delivery
              where channel = ? and status = 'DELIVERED' and delivered_at < ?
              order by delivered_at
              limit ?
                for update skip locked)
      """;

  private static final int CLEANUP_BATCH = 1000;

  private static final long CLEANUP_EVERY_NANOS = Duration.ofMinutes(1).toNanos();

  private final DataSource dataSource;
  private final String channel;
  private final Receiver receiver;
  private final Clock clock;
  private final int batchSize;
  private final int maxAttempts;
  private final Backoff backoff;
  private final Duration pollInterval;
  private final OutboxListener listener;
  private final Duration deliveredRetention;
  private final PollingWorker worker;

  private DeliverySender(Builder b) {
    this.dataSource = b.dataSource;
    this.channel = b.channel;
    this.receiver = b.receiver;
    this.clock = b.clock != null ? b.clock : DatabaseClock.of(b.dataSource);
    this.batchSize = b.batchSize;
    this.maxAttempts = b.maxAttempts;
    this.backoff = Backoff.exponential(b.initialBackoff, b.maxBackoff);
    this.pollInterval = b.pollInterval;
    this.listener = b.listener;
    this.deliveredRetention = b.deliveredRetention;
    this.worker =
        PollingWorker.named("idemkit-delivery-" + channel)
            .lanes(1, lane -> poll())
            .afterFailure(
                e -> {
                  // The thread lives on, whatever a round throws.
                  LOG.log(Level.WARNING, "Delivery round on " + channel + " failed", e);
                  return Duration.ofSeconds(1);
                })
            .build();
  }

  /** The delivered retention when none is given: 14 days, the inbox's default retention. */
  public static final Duration DEFAULT_DELIVERED_RETENTION = Duration.ofDays(14);

  public static Builder builder(DataSource dataSource, String channel, Receiver receiver) {
    return new Builder(dataSource, channel, receiver);
  }

  /**
   * What one round did: deliveries picked, delivered, failed (retried later, or parked). Those a
   * {@link #close} cut short are neither delivered nor failed.
   */
  public record Round(int picked, int delivered, int failed) {}

  /** One round (see the class comment); safe from several threads or processes at once. */
  public Round deliverOnce() throws SQLException {
    Round r = Transactions.inTransaction(dataSource, this::deliver);
    if (r.delivered() > 0) {
      listener.delivered(channel, r.delivered());
    }
    return r;
  }

  private Round deliver(Connection c) throws SQLException {
    int picked = 0;
    int delivered = 0;
    int failed = 0;
    try (PreparedStatement pick = c.prepareStatement(PICK);
        PreparedStatement ok = c.prepareStatement(MARK_DELIVERED);
        PreparedStatement ko = c.prepareStatement(MARK_FAILED)) {
      pick.setString(1, channel);
      pick.setObject(2, Outbox.utc(clock.instant()));
      pick.setInt(3, batchSize);
      try (ResultSet rs = pick.executeQuery()) {
        while (rs.next()) {
          picked++;
          String key = rs.getString(1);
          int attempt = rs.getInt(3) + 1;
          try {
            receiver.deliver(key, rs.getString(2));
            ok.setObject(1, Outbox.utc(clock.instant()));
            ok.setString(2, key);
            ok.addBatch();
            delivered++;
          } catch (Exception | Error e) {
            if (e instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
              // close() interrupted the call: the shutdown is not this delivery's failure. It
              // counts no attempt and stays due (sent again, with its key, by the next sender);
              // the round ends here and commits what was delivered.
              Thread.currentThread().interrupt();
              LOG.log(Level.FINE, "Delivery " + key + " on " + channel + " cut short by close()");
              break;
            }
            // An Error from the receiver (an AssertionError, a StackOverflowError) fails this
            // delivery like an exception; the round and the sender's thread go on.
            LOG.log(Level.INFO, "Delivery " + key + " on " + channel + " failed: " + e);
            Instant now = clock.instant();
            ko.setString(1, e.getClass().getSimpleName() + ": " + e.getMessage());
            ko.setObject(2, Outbox.utc(now.plus(backoff.delay(attempt))));
            ko.setInt(3, maxAttempts);
            ko.setString(4, key);
            ko.addBatch();
            failed++;
          }
        }
      }
      if (delivered > 0) {
        ok.executeBatch();
      }
      if (failed > 0) {
        ko.executeBatch();
      }
    }
    return new Round(picked, delivered, failed);
  }

  /**
   * Deletes this channel's deliveries delivered longer ago than the {@link
   * Builder#deliveredRetention delivered retention}; answers how many. Pending and parked ones, of
   * any age, are never touched.
   *
   * <p>Deletes in batches of {@value #CLEANUP_BATCH} rows, each a statement and a transaction of
   * its own (no lock is held past a batch), and passes by rows another transaction holds ({@code
   * SKIP LOCKED}): safe on every instance at once, the cleanups share the rows rather than wait for
   * each other, and each row is deleted once.
   */
  public int deleteDelivered() throws SQLException {
    return Outbox.inBatches(CLEANUP_BATCH, () -> deleteDeliveredBatch(CLEANUP_BATCH));
  }

  /**
   * One batch of {@link #deleteDelivered}: up to {@code limit} rows, in a transaction of its own.
   */
  int deleteDeliveredBatch(int limit) throws SQLException {
    try (Connection c = Transactions.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(DELETE_DELIVERED)) {
      s.setString(1, channel);
      s.setObject(2, Outbox.utc(clock.instant().minus(deliveredRetention)));
      s.setInt(3, limit);
      return s.executeUpdate();
    }
  }

  /**
   * One batch of the sender thread's cleanup; answers when the next is due: at once (after the next
   * delivery round) if the batch was full, else in a minute. One batch between two rounds, so a
   * large backlog of old delivered rows (a first start after an upgrade) never holds deliveries
   * back by more than a batch. A failed cleanup (its database away) is logged and tried again in a
   * minute; the delivery round still runs.
   */
  private long cleanUpOneBatch() {
    try {
      int deleted = deleteDeliveredBatch(CLEANUP_BATCH);
      if (deleted > 0) {
        LOG.log(Level.FINE, () -> "Deleted " + deleted + " delivered row(s) on " + channel);
      }
      if (deleted == CLEANUP_BATCH) {
        return System.nanoTime();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.log(Level.WARNING, "Cleanup of delivered rows on " + channel + " failed", e);
    }
    return System.nanoTime() + CLEANUP_EVERY_NANOS;
  }

  /**
   * Starts a thread running rounds, pausing the poll interval after a round that was not full (a
   * second after one that failed); it also {@link #deleteDelivered deletes delivered rows} past the
   * retention, from when it starts: one batch before a round while rows are due, then again a
   * minute after the last batch that was not full. Does nothing if the sender is running.
   */
  public DeliverySender start() {
    worker.start();
    return this;
  }

  /** The thread's poll: a cleanup batch when one is due, then a round. */
  private PollingWorker.Poll poll() {
    long[] nextCleanup = {System.nanoTime()};
    return () -> {
      if (System.nanoTime() - nextCleanup[0] >= 0) {
        nextCleanup[0] = cleanUpOneBatch();
      }
      return deliverOnce().picked() < batchSize ? pollInterval : Duration.ZERO;
    };
  }

  /**
   * Stops the sender's thread: it is interrupted, and a delivery the receiver was still working on
   * when it was counts no attempt and stays due (the next sender delivers it again, under the same
   * key); what the round delivered before is marked. Waits for the round, at most ten seconds.
   */
  @Override
  public void close() {
    worker.stop();
  }

  /** Configures a sender; every setting but the three given has a default. */
  public static final class Builder {
    private final DataSource dataSource;
    private final String channel;
    private final Receiver receiver;
    private Clock clock;
    private int batchSize = 50;
    private int maxAttempts = 10;
    private Duration initialBackoff = Duration.ofSeconds(1);
    private Duration maxBackoff = Duration.ofMinutes(5);
    private Duration pollInterval = Duration.ofMillis(100);
    private OutboxListener listener = OutboxListener.NONE;
    private Duration deliveredRetention = DEFAULT_DELIVERED_RETENTION;
    private final List<InboxConsumer> recordedBy = new ArrayList<>();

    private Builder(DataSource dataSource, String channel, Receiver receiver) {
      this.dataSource = Objects.requireNonNull(dataSource);
      this.channel = Objects.requireNonNull(channel);
      this.receiver = Objects.requireNonNull(receiver);
    }

    /**
     * The clock for due times, marks and cut-offs (default: the database server's, {@link
     * DatabaseClock}, so that instances whose clocks disagree agree on when a row is due).
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    /** At most this many deliveries per round (default 50; at least 1). */
    public Builder batchSize(int batchSize) {
      this.batchSize = batchSize;
      return this;
    }

    /** A delivery is parked after failing this many times (default 10; at least 1). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Wait after the first failure, doubling up to {@code max} (default 1 s, 5 min; both positive,
     * {@code max} not below {@code initial}).
     */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial);
      this.maxBackoff = Objects.requireNonNull(max);
      return this;
    }

    /** The pause after a round that was not full (default 100 ms; at least 1 ms). */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Objects.requireNonNull(pollInterval);
      return this;
    }

    public Builder listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * How long a delivered row is kept after its delivery (default {@link
     * #DEFAULT_DELIVERED_RETENTION}, 14 days, the inbox's default retention; positive). While it is
     * kept its key is known, and recording the key again is answered as a duplicate; after it, the
     * same key recorded again is a new delivery. Keep it at least as long as the retention of every
     * inbox whose consumer records deliveries on this channel (see {@link #recordedBy}).
     */
    public Builder deliveredRetention(Duration deliveredRetention) {
      this.deliveredRetention = Objects.requireNonNull(deliveredRetention);
      return this;
    }

    /**
     * An inbox consumer whose handler records this channel's deliveries (once for each, if several
     * do): {@link #build} then refuses a delivered retention shorter than its retention.
     */
    public Builder recordedBy(InboxConsumer consumer) {
      this.recordedBy.add(Objects.requireNonNull(consumer));
      return this;
    }

    /**
     * The sender.
     *
     * @throws IllegalArgumentException naming the setting and its value, if a count is below 1, a
     *     backoff or the delivered retention zero or negative (or the max backoff below the initial
     *     one), or the poll interval under a millisecond (a busy loop)
     * @throws IllegalStateException if the delivered retention is shorter than the retention of the
     *     inbox consumer given to {@link #recordedBy}: a key forgotten before the inbox forgets the
     *     message that recorded it
     */
    public DeliverySender build() {
      String part = "DeliverySender " + channel;
      Settings.atLeastOne(part, "batchSize", batchSize);
      Settings.atLeastOne(part, "maxAttempts", maxAttempts);
      Settings.backoff(part, initialBackoff, maxBackoff);
      Settings.pollInterval(part, pollInterval);
      Settings.positive(part, "deliveredRetention", deliveredRetention);
      for (InboxConsumer consumer : recordedBy) {
        if (deliveredRetention.compareTo(consumer.retention()) < 0) {
          throw new IllegalStateException(
              part
                  + " refuses to start: its deliveredRetention ("
                  + deliveredRetention
                  + ") is shorter than the retention of inbox consumer "
                  + consumer.consumerName()
                  + " ("
                  + consumer.retention()
                  + "), which records its deliveries: a key must stay known at least as long as"
                  + " the message that recorded it. Raise deliveredRetention.");
        }
      }
      return new DeliverySender(this);
    }
  }
}
