package dev.idemkit.outbox;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.jdbc.Transactions;
import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.outbox.spi.TransportUnavailableException;
import dev.idemkit.support.Backoff;
import dev.idemkit.support.PollingWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Sends committed outbox events through an {@link EventTransport}, at least once.
 *
 * <p>One {@link #relayOnce() round}: in one transaction, pick up to a batch of due events, each the
 * oldest unsent event of its aggregate, locking them with {@code FOR UPDATE SKIP LOCKED}; hand them
 * to the transport; wait for its acknowledgements; mark the acknowledged ones sent and the others
 * failed (retried with exponential backoff, parked after the last allowed attempt); commit.
 *
 * <ul>
 *   <li><b>Several relays at once</b> (threads or processes): a picked event stays row-locked until
 *       its round commits, and other relays skip locked rows, so no event is in two relays' hands.
 *       A relay that dies releases its locks with its connection; its events are picked again (the
 *       transport may then have them twice: at least once, and consumers deduplicate).
 *   <li><b>Never skips a late commit</b>: there is no high-water mark. A round picks every
 *       committed unsent event, whenever its transaction committed; ids and timestamps written
 *       before commit play no part in what is picked.
 *   <li><b>Per-aggregate order</b>: an event is picked only when no older event of its aggregate is
 *       unsent (whether in flight elsewhere, failing, or parked). Numbers follow commit order
 *       within an aggregate (see {@link Outbox#append}), so an aggregate's events are sent in
 *       commit order, one at a time, and a parked event holds its aggregate's later events back
 *       until re-queued.
 *   <li><b>Marked sent only after the transport acknowledged.</b>
 * </ul>
 *
 * <p>The transaction stays open while the transport sends (at most the acknowledgement timeout):
 * that is what keeps the rows locked. Size the pool for one connection per relay thread plus what
 * the transport's consumers use.
 */
public final class OutboxRelay implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(OutboxRelay.class.getName());

  /**
   * The oldest unsent event of each aggregate that is due, locked for this relay. Read-committed:
   * the subquery reads this statement's snapshot, and a row another relay updated since the
   * snapshot is re-checked in its latest version before it is locked (so an event another relay
   * just marked sent is not picked again). Rows other relays hold are skipped, not waited for. A
   * later event of an aggregate is never picked while an older one is unsent in this snapshot; the
   * older one can only have become sent since, never the other way round, so the check errs on the
   * side of waiting one more round.
   *
   * <p>"Oldest unsent of its aggregate" is a correlated scalar subquery (the lowest unsent
   * sequence, one probe of the unsent index), not {@code NOT EXISTS}: the planner cannot turn it
   * into a hash anti join over every unsent event, which it did on a table without statistics
   * (after a truncate, or new), costing a scan of the whole backlog per round. This way a round
   * walks the due index in order and stops at the batch size, whatever the statistics say.
   */
  private static final String PICK =
      """
      select e.event_id, e.event_type, e.tenant, e.aggregate_type, e.aggregate_id, e.sequence,
             e.occurred_at, e.payload, e.attempts
        from idemkit_outbox e
       where e.sent_at is null
         and e.parked_at is null
         and e.next_attempt_at <= ?
         and e.sequence = (select min(older.sequence)
                             from idemkit_outbox older
                            where older.aggregate_type = e.aggregate_type
                              and older.aggregate_id = e.aggregate_id
                              and older.sent_at is null)
       order by e.next_attempt_at
       limit ?
         for update of e skip locked
      """;

  /**
   * Marks a round's events in one statement: the acknowledged ones sent, the others failed (the
   * error, the next attempt's time; one more attempt, and parked at the last allowed one, unless
   * the failure was the transport's, {@code counts} false: see {@link
   * dev.idemkit.outbox.spi.TransportUnavailableException}).
   */
  private static final String MARK =
      """
      update idemkit_outbox o
         set sent_at = case when u.error is null then ?::timestamptz end,
             last_error = u.error,
             attempts = case when u.counts then o.attempts + 1 else o.attempts end,
             next_attempt_at = coalesce(u.next_attempt_at::timestamptz, o.next_attempt_at),
             parked_at = case when u.counts and o.attempts + 1 >= ?
                              then ?::timestamptz end
        from unnest(?::uuid[], ?::text[], ?::text[], ?::boolean[])
             as u(event_id, error, next_attempt_at, counts)
       where o.event_id = u.event_id
      """;

  /**
   * For the round's transaction only: reach rows through their indexes. Every statement of a round
   * touches a batch of rows by key (the due index in order, the unsent index per aggregate, the
   * primary key per event), a small part of the table whatever its size, so an index plan is the
   * right one in every state of the table. Without this the planner chose, for the mark, a
   * sequential scan of the whole table with a hash join, planned while the table was new or just
   * truncated (no statistics, a few pages) and then kept, as the connection's cached generic plan,
   * while the table grew: in {@code bench/events} one scan of the outbox per round (8 to 30 ms a
   * round at tens of thousands of rows instead of about 1 ms).
   */
  private static final String BY_KEY_ONLY = "set local enable_seqscan = off";

  /**
   * One batch of sent events past the retention: the oldest {@link #DELETE_BATCH} found on the
   * index of sent events ({@code idemkit_outbox_sent_ix}), each row locked and deleted by its key,
   * skipping rows another transaction holds. Short statements, never a lock on the whole backlog.
   */
  private static final String DELETE_SENT =
      """
      delete from idemkit_outbox
      where event_id in (
        select event_id from idemkit_outbox
        where sent_at is not null and sent_at < ?
        order by sent_at
        limit ?
        for update skip locked)
      """;

  /** Sent events one cleanup statement deletes at most. */
  static final int DELETE_BATCH = 1000;

  private final DataSource dataSource;
  private final EventTransport transport;
  private final Clock clock;
  private final int batchSize;
  private final int maxAttempts;
  private final Backoff backoff;
  private final Duration ackTimeout;
  private final Duration sentRetention;
  private final Duration pollInterval;
  private final AggregateWindow window;
  private final OutboxListener listener;
  private final PollingWorker worker;

  /**
   * Rounds in a row (of this relay, any lane) that met a transport outage; the next backoff of an
   * event the outage failed doubles with it. Reset by a round in which something was acknowledged.
   * Threads race on it harmlessly: it only spaces retries out.
   */
  private final AtomicInteger outageRounds = new AtomicInteger();

  private OutboxRelay(Builder b) {
    this.dataSource = b.dataSource;
    this.transport = b.transport;
    this.clock = b.clock != null ? b.clock : DatabaseClock.of(b.dataSource);
    this.batchSize = b.batchSize;
    this.maxAttempts = b.maxAttempts;
    this.backoff = Backoff.exponential(b.initialBackoff, b.maxBackoff);
    this.ackTimeout = b.ackTimeout;
    this.sentRetention = b.sentRetention;
    this.pollInterval = b.pollInterval;
    this.window = new AggregateWindow(b.batchSize, b.aggregateWindow);
    this.listener = b.listener;
    this.worker =
        PollingWorker.named("idemkit-outbox-relay")
            .lanes(b.threads, this::lane)
            .afterFailure(
                e -> {
                  // Whatever a round throws (an Error included), the lane lives on: a dead relay
                  // thread would leave every event unsent, with nothing but a log line to say so.
                  LOG.log(Level.WARNING, "Outbox relay round failed; trying again", e);
                  return pollInterval.compareTo(Duration.ofSeconds(1)) > 0
                      ? pollInterval
                      : Duration.ofSeconds(1);
                })
            .stopTimeout(b.ackTimeout.plusSeconds(5))
            .build();
  }

  /** A relay for the outbox on {@code dataSource}, sending through {@code transport}. */
  public static Builder builder(DataSource dataSource, EventTransport transport) {
    return new Builder(dataSource, transport);
  }

  /**
   * What one round did: events picked, sent, failed (retried later, or parked). Events a {@link
   * #close} cut short are neither sent nor failed.
   */
  public record Round(int picked, int sent, int failed, int parked) {
    static final Round EMPTY = new Round(0, 0, 0, 0);
  }

  /**
   * One round: pick, send, wait for acknowledgements, mark; one transaction. Safe to call from
   * several threads or processes at once.
   */
  public Round relayOnce() throws SQLException {
    Round round = Transactions.inTransaction(dataSource, this::relay);
    if (round.sent() > 0) {
      listener.published(round.sent());
    }
    if (round.failed() > 0) {
      listener.publishFailed(round.failed());
    }
    if (round.parked() > 0) {
      listener.eventsParked(round.parked());
    }
    return round;
  }

  private Round relay(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(BY_KEY_ONLY);
    }
    Instant now = clock.instant();
    List<EventEnvelope> batch = new ArrayList<>();
    List<Integer> attempts = new ArrayList<>();
    try (PreparedStatement s = c.prepareStatement(PICK)) {
      s.setObject(1, Outbox.utc(now));
      s.setInt(2, batchSize);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          batch.add(Outbox.envelope(rs));
          attempts.add(rs.getInt("attempts"));
        }
      }
    }
    if (batch.isEmpty()) {
      return Round.EMPTY;
    }
    if (window.size() > 1 && batch.size() < batchSize) {
      window.addFollowers(c, now, batch, attempts);
    }
    Throwable[] errors = awaitAcknowledgements(batch);
    // Interrupted (close() stops the threads so): what was not acknowledged yet was cut short by
    // the shutdown, not failed by the event; it counts no attempt and stays due, for the next
    // relay.
    boolean closing = Thread.currentThread().isInterrupted();
    Instant markedAt = clock.instant();
    boolean outage = false;
    boolean acknowledged = false;
    for (Throwable error : errors) {
      outage |= error instanceof TransportUnavailableException;
      acknowledged |= error == null;
    }
    int outageRound = acknowledged ? 0 : outage ? outageRounds.incrementAndGet() : 0;
    if (acknowledged) {
      outageRounds.set(0);
    }
    UUID[] ids = new UUID[batch.size()];
    String[] messages = new String[batch.size()];
    String[] nextAttempts = new String[batch.size()]; // ISO-8601, read as timestamptz
    Boolean[] counts = new Boolean[batch.size()];
    int failed = 0;
    int abandoned = 0;
    int parked = 0;
    for (int i = 0; i < batch.size(); i++) {
      ids[i] = batch.get(i).eventId();
      counts[i] = false;
      if (errors[i] != null && closing) {
        abandoned++;
        messages[i] =
            truncate("relay closed before the transport answered: " + describe(errors[i]));
      } else if (errors[i] instanceof TransportUnavailableException) {
        // Not the event's fault: back off, but the attempt does not count toward parking.
        failed++;
        messages[i] = truncate("transport unavailable: " + errors[i].getMessage());
        nextAttempts[i] = markedAt.plus(backoff.delay(outageRound)).toString();
      } else if (errors[i] != null) {
        failed++;
        counts[i] = true;
        messages[i] = describe(errors[i]);
        int attempt = attempts.get(i) + 1;
        if (attempt >= maxAttempts) {
          parked++;
        }
        nextAttempts[i] = markedAt.plus(backoff.delay(attempt)).toString();
      }
    }
    try (PreparedStatement s = c.prepareStatement(MARK)) {
      s.setObject(1, Outbox.utc(markedAt));
      s.setInt(2, maxAttempts);
      s.setObject(3, Outbox.utc(markedAt));
      s.setArray(4, c.createArrayOf("uuid", ids));
      s.setArray(5, c.createArrayOf("text", messages));
      s.setArray(6, c.createArrayOf("text", nextAttempts));
      s.setArray(7, c.createArrayOf("boolean", counts));
      s.executeUpdate();
    }
    return new Round(batch.size(), batch.size() - failed - abandoned, failed, parked);
  }

  /** Sends the batch; answers, per event, null if acknowledged, else why not. */
  private Throwable[] awaitAcknowledgements(List<EventEnvelope> batch) {
    Throwable[] errors = new Throwable[batch.size()];
    List<CompletionStage<Void>> acks;
    // The timeout counts from the hand-over, not from send()'s return: a transport whose send()
    // blocks (a Kafka producer waiting for metadata) must not stretch the round, and so the
    // transaction that holds the batch's row locks, beyond it.
    long deadline = System.nanoTime() + ackTimeout.toNanos();
    try {
      acks = transport.send(List.copyOf(batch));
      if (acks == null || acks.size() != batch.size()) {
        throw new IllegalStateException(
            "transport answered "
                + (acks == null ? "null" : acks.size() + " acknowledgements")
                + " for "
                + batch.size()
                + " events");
      }
    } catch (RuntimeException | Error e) {
      // An Error from the transport fails this batch (each event's attempt counted) and nothing
      // more: the relay's thread goes on with the next round.
      LOG.log(Level.WARNING, "Transport failed to send a batch of " + batch.size(), e);
      java.util.Arrays.fill(errors, e);
      return errors;
    }
    for (int i = 0; i < acks.size(); i++) {
      CompletableFuture<Void> ack = acks.get(i).toCompletableFuture();
      try {
        ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        errors[i] = e.getCause();
      } catch (TimeoutException e) {
        errors[i] = new TimeoutException("not acknowledged within " + ackTimeout);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        errors[i] = new InterruptedException("relay interrupted");
      } catch (RuntimeException e) {
        errors[i] = e;
      }
    }
    return errors;
  }

  private static String describe(Throwable t) {
    if (t instanceof TimeoutException || t instanceof InterruptedException) {
      return t.getMessage(); // the relay's own: not acknowledged in time, interrupted
    }
    return truncate(
        t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage()));
  }

  private static String truncate(String m) {
    return m.length() > 1000 ? m.substring(0, 1000) : m;
  }

  /**
   * Deletes events sent longer ago than the retention, in batches of {@value #DELETE_BATCH} (each
   * its own short transaction; rows another transaction holds are left for a later call); answers
   * how many.
   */
  public int deleteSentEvents() throws SQLException {
    return Outbox.inBatches(DELETE_BATCH, this::deleteSentBatch);
  }

  /** One batch of {@link #deleteSentEvents}: at most {@value #DELETE_BATCH} events. */
  int deleteSentBatch() throws SQLException {
    try (Connection c = Transactions.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(DELETE_SENT)) {
      s.setObject(1, Outbox.utc(clock.instant().minus(sentRetention)));
      s.setInt(2, DELETE_BATCH);
      return s.executeUpdate();
    }
  }

  /**
   * Starts the relay's threads (a {@link PollingWorker} lane each): each runs rounds back to back
   * while they come back full, else waits the poll interval; after a failed round it waits the poll
   * interval, at least a second. Every 1,000 rounds the first lane deletes a batch of sent events
   * past the retention, and then one batch before each round while batches come back full: a
   * backlog of old events holds its rounds back by one short statement each, never by the whole
   * backlog. Does nothing if the relay is running.
   */
  public OutboxRelay start() {
    worker.start();
    return this;
  }

  /** Lane {@code lane}'s poll: a round, and on the first lane the cleanup now and then. */
  private PollingWorker.Poll lane(int lane) {
    boolean deletes = lane == 0;
    long[] rounds = {0};
    boolean[] moreToDelete = {false};
    return () -> {
      if (deletes && (moreToDelete[0] || ++rounds[0] % 1000 == 0)) {
        moreToDelete[0] = false; // a failed batch waits for the next thousand rounds
        moreToDelete[0] = deleteSentBatch() == DELETE_BATCH;
      }
      return relayOnce().picked() < batchSize ? pollInterval : Duration.ZERO;
    };
  }

  /**
   * Stops the threads: each is interrupted, and a round waiting for the transport stops waiting and
   * marks what was acknowledged; the events it was still waiting for count no attempt (the shutdown
   * is not their failure, and shutdowns must not walk events toward parking) and stay due, for the
   * next relay to send again. Waits for the rounds in flight, at most the acknowledgement timeout
   * and five seconds.
   */
  @Override
  public void close() {
    worker.stop();
  }

  /** Configures a relay; every setting has a default. */
  public static final class Builder {
    private final DataSource dataSource;
    private final EventTransport transport;
    private Clock clock;
    private int batchSize = 200;
    private int maxAttempts = 10;
    private Duration initialBackoff = Duration.ofSeconds(1);
    private Duration maxBackoff = Duration.ofMinutes(5);
    private Duration ackTimeout = Duration.ofSeconds(30);
    private Duration sentRetention = Duration.ofDays(7);
    private Duration pollInterval = Duration.ofMillis(50);
    private int threads = 1;
    private int aggregateWindow = 1;
    private OutboxListener listener = OutboxListener.NONE;

    private Builder(DataSource dataSource, EventTransport transport) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.transport = Objects.requireNonNull(transport, "transport");
    }

    /**
     * The clock for due times, marks and retention (default: the database server's, {@link
     * DatabaseClock}).
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    /** At most this many events per round (default 200; at least 1). */
    public Builder batchSize(int batchSize) {
      this.batchSize = batchSize;
      return this;
    }

    /** An event is parked after failing this many rounds (default 10; at least 1). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Wait after the first failure, doubling up to {@code max} (default 1 s, 5 min). Both must be
     * positive (else a failing event would be retried at once, round after round), {@code max} not
     * below {@code initial}: {@link #build()} refuses otherwise.
     */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial, "initial backoff");
      this.maxBackoff = Objects.requireNonNull(max, "max backoff");
      return this;
    }

    /**
     * How long a round waits for the transport's acknowledgements (default 30 s; positive, else no
     * event could ever be acknowledged).
     */
    public Builder ackTimeout(Duration ackTimeout) {
      this.ackTimeout = Objects.requireNonNull(ackTimeout, "ackTimeout");
      return this;
    }

    /** Sent events are deleted this long after sending (default 7 days; positive). */
    public Builder sentRetention(Duration sentRetention) {
      this.sentRetention = Objects.requireNonNull(sentRetention);
      return this;
    }

    /** The pause after a round that was not full (default 50 ms; at least 1 ms). */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Objects.requireNonNull(pollInterval);
      return this;
    }

    /** Relay threads {@link #start()} runs (default 1; at least 1). */
    public Builder threads(int threads) {
      this.threads = threads;
      return this;
    }

    /**
     * How many unsent events of one aggregate a round may carry (default 1: an aggregate's next
     * event is sent only once the previous one is acknowledged and marked, so a backlog on one
     * aggregate drains one event per round). With n &gt; 1 a round that picks an aggregate's oldest
     * unsent event also takes the next ones, up to n in all, and hands them to the transport in
     * sequence; only that relay has them. A transport that keeps the order of one key's records
     * (Kafka's idempotent producer) delivers them in order; if one fails and a later one does not,
     * the later one arrives first: use it only when every consumer applies in sequence from the
     * first ({@link InboxConsumer.Builder#inSequence} with {@link SequenceStart#FROM_ONE}, as Kafka
     * consumers do), which holds an event that arrives early and applies it after the one before
     * it.
     */
    public Builder aggregateWindow(int aggregateWindow) {
      this.aggregateWindow = aggregateWindow;
      return this;
    }

    /** Told what each round did (default: nobody). */
    public Builder listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * The relay.
     *
     * @throws IllegalArgumentException naming the setting and its value, if a count is below 1, a
     *     duration zero or negative, the poll interval under a millisecond (a busy loop), or the
     *     max backoff below the initial one
     */
    public OutboxRelay build() {
      String part = "OutboxRelay";
      Settings.atLeastOne(part, "batchSize", batchSize);
      Settings.atLeastOne(part, "maxAttempts", maxAttempts);
      Settings.atLeastOne(part, "threads", threads);
      Settings.atLeastOne(part, "aggregateWindow", aggregateWindow);
      Settings.backoff(part, initialBackoff, maxBackoff);
      Settings.positive(part, "ackTimeout", ackTimeout);
      Settings.positive(part, "sentRetention", sentRetention);
      Settings.pollInterval(part, pollInterval);
      return new OutboxRelay(this);
    }
  }
}
