package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.MessageReceiver;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * A consumer with an inbox: applies each message once, whatever the transport redelivers.
 *
 * <p>A batch of messages is applied in one transaction that first claims their inbox rows (unique
 * per consumer name and message id) in one statement, then runs the {@link MessageHandler} ({@link
 * MessageHandler#applyAll applyAll}, once for the batch), then commits both. So:
 *
 * <ul>
 *   <li>a duplicate finds its row {@code PROCESSED}: nothing runs, the answer is {@link
 *       Received#DUPLICATE} (acknowledge);
 *   <li>a failure rolls back the handler's writes and the claims; the failed message is tried again
 *       on its own, and if it fails again the attempt is counted on its row ({@code FAILED}) in a
 *       transaction of its own, and the answer is {@link Received#FAILED} (redeliver); the rest of
 *       the batch is applied without it. After {@code maxAttempts} failures the row is {@code
 *       PARKED} with the message's envelope, for an operator to {@link #requeue re-queue};
 *   <li>two deliveries racing (two consumer instances, or a redelivery overtaking a slow first
 *       delivery) meet at the row: the second one's claim waits on the first one's uncommitted row,
 *       then finds it {@code PROCESSED} (duplicate) or, if the first rolled back, claims it.
 * </ul>
 *
 * <p><b>In sequence</b> ({@link Builder#inSequence}; every Kafka consumer is): the inbox also keeps
 * each aggregate's last applied sequence ({@code idemkit_inbox_sequence}), locked by the batch that
 * applies the aggregate's messages, so two deliveries of one aggregate take turns. A message with
 * the next sequence is applied; one behind it (a sequence already applied) is skipped ({@link
 * Received#DUPLICATE}); one ahead of it (an earlier event is parked, failing, or not there yet) is
 * <em>held</em>: kept in the inbox with its envelope ({@code HELD}), answered {@link Received#HELD}
 * (acknowledge), counted ({@link OutboxListener#messagesHeld}), listed for operators ({@link
 * #held}) and applied by {@link #releaseHeld} once the gap closes. A batch may carry several
 * messages of one aggregate, in order; after a failure, the aggregate's later messages in the batch
 * are answered {@link Received#FAILED} untried.
 *
 * <p>The inbox remembers processed ids for its {@code retention}, which must exceed the transport's
 * redelivery horizon: {@link Builder#build()} refuses otherwise. {@link #deleteProcessed} forgets
 * them after it, and a consumer in sequence from the first message seen also the aggregates that
 * nothing was applied to for as long (a consumer from sequence 1 keeps them: see there).
 */
public final class InboxConsumer implements MessageReceiver {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

  /**
   * Claims messages for this transaction, in one statement: new rows, or rows left {@code FAILED}
   * by an earlier attempt or {@code HELD}. Returns the ids claimed; a {@code PROCESSED} or {@code
   * PARKED} row is not. A row another transaction inserted or claimed and has not committed yet
   * makes this one wait, then decide on the committed outcome.
   */
  private static final String CLAIM =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      processed_at)
      select ?, u.id, 'PROCESSED', 0, ?, ? from unnest(?::uuid[]) as u(id)
      on conflict (consumer_name, message_id) do update
         set status = 'PROCESSED', processed_at = excluded.processed_at, last_error = null,
             held_at = null, event_type = null, tenant = null, aggregate_type = null,
             aggregate_id = null, sequence = null, occurred_at = null, payload = null
       where i.status in ('FAILED', 'HELD')
      returning message_id
      """;

  private static final String STATUSES =
      """
      select message_id, status from idemkit_inbox
       where consumer_name = ? and message_id = any (?::uuid[])
      """;

  private static final String STATUS =
      """
      select status from idemkit_inbox where consumer_name = ? and message_id = ?
      """;

  /**
   * Locks the batch's aggregates' sequence rows (creating missing ones, with no sequence yet) and
   * answers their last applied sequences. A second delivery of one of these aggregates waits here
   * until this transaction ends, then reads what it committed.
   */
  private static final String LOCK_SEQUENCES =
      """
      insert into idemkit_inbox_sequence as s (consumer_name, aggregate_type, aggregate_id,
                                               last_sequence, applied_at)
      select ?, u.aggregate_type, u.aggregate_id, null, ?
        from unnest(?::text[], ?::text[]) as u(aggregate_type, aggregate_id)
      on conflict (consumer_name, aggregate_type, aggregate_id)
      do update set last_sequence = s.last_sequence
      returning aggregate_type, aggregate_id, last_sequence
      """;

  /**
   * The highest sequence this consumer processed, by id in its inbox, of each of these aggregates,
   * read through the outbox of this database (which holds each event's aggregate and sequence until
   * the sent-event retention deletes it): what a consumer that applied them without keeping
   * sequences (on the embedded transport, not in sequence) has already applied. No index serves the
   * outbox side (sent events are indexed by time only), so this reads the outbox's events: it runs
   * only for an aggregate new to this consumer whose first message is not its first event, once per
   * such aggregate (the sequence row it records then answers).
   */
  private static final String APPLIED_WITHOUT_SEQUENCE =
      """
      select o.aggregate_type, o.aggregate_id, max(o.sequence)
        from unnest(?::text[], ?::text[]) as u(aggregate_type, aggregate_id)
        join idemkit_outbox o
          on o.aggregate_type = u.aggregate_type
         and o.aggregate_id = u.aggregate_id
        join idemkit_inbox i
          on i.consumer_name = ?
         and i.message_id = o.event_id
         and i.status = 'PROCESSED'
       group by o.aggregate_type, o.aggregate_id
      """;

  private static final String ADVANCE =
      """
      update idemkit_inbox_sequence s set last_sequence = u.last_sequence, applied_at = ?
        from unnest(?::text[], ?::text[], ?::bigint[])
             as u(aggregate_type, aggregate_id, last_sequence)
       where s.consumer_name = ? and s.aggregate_type = u.aggregate_type
         and s.aggregate_id = u.aggregate_id
      """;

  /** Holds messages ahead of their aggregate's sequence (a row left FAILED becomes HELD). */
  private static final String HOLD =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      held_at, event_type, tenant, aggregate_type, aggregate_id,
                                      sequence, occurred_at, payload)
      select ?, u.id, 'HELD', 0, ?, ?, u.event_type, u.tenant, u.aggregate_type, u.aggregate_id,
             u.sequence, u.occurred_at::timestamptz, u.payload
        from unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[],
                    ?::text[])
             as u(id, event_type, tenant, aggregate_type, aggregate_id, sequence, occurred_at,
                  payload)
      on conflict (consumer_name, message_id) do update
         set status = 'HELD', held_at = excluded.held_at
       where i.status = 'FAILED'
      """;

  /**
   * Held messages whose gap has closed (their aggregate's next sequence, or behind it): the lowest
   * of each aggregate. The last parameter is what is expected of an aggregate with no sequence yet.
   */
  private static final String RELEASABLE =
      """
      select distinct on (i.aggregate_type, i.aggregate_id)
             i.message_id as event_id, i.event_type, i.tenant, i.aggregate_type, i.aggregate_id,
             i.sequence, i.occurred_at, i.payload
        from idemkit_inbox i
        left join idemkit_inbox_sequence s
          on s.consumer_name = i.consumer_name
         and s.aggregate_type = i.aggregate_type
         and s.aggregate_id = i.aggregate_id
       where i.consumer_name = ? and i.status = 'HELD'
         and i.sequence <= coalesce(s.last_sequence + 1, ?)
       order by i.aggregate_type, i.aggregate_id, i.sequence
       limit ?
      """;

  private static final String HELD =
      """
      select i.message_id as event_id, i.event_type, i.tenant, i.aggregate_type, i.aggregate_id,
             i.sequence, i.occurred_at, i.payload, i.held_at,
             coalesce(s.last_sequence, 0) as last_applied
        from idemkit_inbox i
        left join idemkit_inbox_sequence s
          on s.consumer_name = i.consumer_name
         and s.aggregate_type = i.aggregate_type
         and s.aggregate_id = i.aggregate_id
       where i.consumer_name = ? and i.status = 'HELD'
       order by i.held_at, i.aggregate_type, i.aggregate_id, i.sequence
       limit ?
      """;

  private static final String HELD_SUMMARY =
      """
      select count(*), min(held_at) from idemkit_inbox where consumer_name = ? and status = 'HELD'
      """;

  /**
   * Counts a failed attempt (in its own transaction, after the attempt rolled back), keeping the
   * envelope; parks the message at the last allowed attempt. A held message that failed once
   * released stays held (it is applied only from there). Does nothing to a row a racing delivery
   * has meanwhile {@code PROCESSED} (or parked).
   */
  private static final String RECORD_FAILURE =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      last_error, event_type, tenant, aggregate_type,
                                      aggregate_id, sequence, occurred_at, payload)
      values (?, ?, case when 1 >= ? then 'PARKED' else 'FAILED' end, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      on conflict (consumer_name, message_id) do update
         set attempts = i.attempts + 1,
             status = case when i.attempts + 1 >= ? then 'PARKED'
                           when i.status = 'HELD' then 'HELD'
                           else 'FAILED' end,
             last_error = excluded.last_error,
             event_type = excluded.event_type, tenant = excluded.tenant,
             aggregate_type = excluded.aggregate_type, aggregate_id = excluded.aggregate_id,
             sequence = excluded.sequence, occurred_at = excluded.occurred_at,
             payload = excluded.payload
       where i.status in ('FAILED', 'HELD')
      returning status
      """;

  private static final String PARKED =
      """
      select message_id, event_type, tenant, aggregate_type, aggregate_id, sequence, occurred_at,
             payload, attempts, last_error
        from idemkit_inbox
       where consumer_name = ? and status = 'PARKED'
       order by received_at, message_id
       limit ?
      """;

  private static final String PARKED_COUNT =
      """
      select count(*) from idemkit_inbox where consumer_name = ? and status = 'PARKED'
      """;

  /**
   * One more try for a parked message, in the transaction that applies it (see {@link #requeue}):
   * the row becomes claimable ({@code FAILED}) for that transaction only, and locked until it ends.
   */
  private static final String UNPARK =
      """
      update idemkit_inbox
         set status = 'FAILED'
       where consumer_name = ? and message_id = ? and status = 'PARKED'
      returning message_id as event_id, event_type, tenant, aggregate_type, aggregate_id,
                sequence, occurred_at, payload
      """;

  /**
   * Counts a re-queue's failed attempt on the row its rollback left parked, with the error. Does
   * nothing to a row a racing re-queue has meanwhile applied.
   */
  private static final String REQUEUE_FAILED =
      """
      update idemkit_inbox
         set attempts = attempts + 1, last_error = ?
       where consumer_name = ? and message_id = ? and status = 'PARKED'
      """;

  /**
   * Deletes up to a batch of this consumer's ids processed before the cutoff. {@code SKIP LOCKED}:
   * two cleanups (two instances) take different rows instead of one waiting for the other, and a
   * row another transaction holds is passed by, never waited for (a later run deletes it). A {@code
   * PROCESSED} row never changes again, so a row locked here is still one to delete.
   */
  private static final String DELETE_PROCESSED =
      """
      delete from idemkit_inbox
       where consumer_name = ? and message_id in (
             select message_id from idemkit_inbox
              where consumer_name = ? and status = 'PROCESSED' and processed_at < ?
              limit ?
                for update skip locked)
      """;

  /**
   * Locks up to a batch of this consumer's sequence rows not advanced since the cutoff, of
   * aggregates with no message waiting in the inbox. {@code SKIP LOCKED}: a row a batch holds is in
   * use, and the cleanup never waits on a batch, so the two cannot deadlock.
   */
  private static final String LOCK_IDLE_SEQUENCES =
      """
      select s.aggregate_type, s.aggregate_id
        from idemkit_inbox_sequence s
       where s.consumer_name = ? and s.applied_at < ?
         and not exists (select 1 from idemkit_inbox i
                          where i.consumer_name = s.consumer_name
                            and i.aggregate_type = s.aggregate_type
                            and i.aggregate_id = s.aggregate_id
                            and i.status <> 'PROCESSED')
       limit ?
         for update of s skip locked
      """;

  /**
   * Deletes the locked rows whose aggregates still have no message waiting: asked again, now that
   * the rows are locked (see {@link #forgetIdleAggregates}).
   */
  private static final String DELETE_IDLE_SEQUENCES =
      """
      delete from idemkit_inbox_sequence s
       using unnest(?::text[], ?::text[]) as u(aggregate_type, aggregate_id)
       where s.consumer_name = ? and s.aggregate_type = u.aggregate_type
         and s.aggregate_id = u.aggregate_id
         and not exists (select 1 from idemkit_inbox i
                          where i.consumer_name = s.consumer_name
                            and i.aggregate_type = s.aggregate_type
                            and i.aggregate_id = s.aggregate_id
                            and i.status <> 'PROCESSED')
      """;

  private static final int CLEANUP_BATCH = 1000;

  /** PostgreSQL's SQLSTATE for a statement sent in an aborted transaction. */
  private static final String IN_FAILED_TRANSACTION = "25P02";

  private final String name;
  private final DataSource dataSource;
  private final MessageHandler handler;
  private final int maxAttempts;
  private final Duration retention;
  private final Clock clock;
  private final OutboxListener listener;
  private final SequenceStart sequenceStart;

  private InboxConsumer(Builder b) {
    this.name = b.name;
    this.dataSource = b.dataSource;
    this.handler = b.handler;
    this.maxAttempts = b.maxAttempts;
    this.retention = b.retention;
    this.clock = b.clock;
    this.listener = b.listener;
    this.sequenceStart = b.sequenceStart;
  }

  /**
   * A consumer named {@code name} (unique among the consumers sharing these tables) applying
   * messages with {@code handler} on {@code dataSource}.
   */
  public static Builder builder(String name, DataSource dataSource, MessageHandler handler) {
    return new Builder(name, dataSource, handler);
  }

  /**
   * How long processed ids are remembered (the delivery sender checks its retention against it).
   */
  Duration retention() {
    return retention;
  }

  @Override
  public String consumerName() {
    return name;
  }

  /** Whether this consumer applies each aggregate's messages in sequence. */
  public boolean inSequence() {
    return sequenceStart != null;
  }

  /**
   * Applies {@code messages}: all in one transaction (one claim statement, one {@link
   * MessageHandler#applyAll}, one commit). If the handler names the message that failed ({@link
   * MessageFailedException}), the batch is rolled back and applied again without it, and it is
   * tried on its own; after any other failure each message is applied on its own. So a poison
   * message costs its neighbours a second try, never an effect. The same message twice in the list
   * is applied once (the second answered {@link Received#DUPLICATE}).
   */
  @Override
  public List<Received> receive(List<EventEnvelope> messages) {
    Received[] out = new Received[messages.size()];
    Map<UUID, Integer> first = new HashMap<>();
    List<Integer> unique = new ArrayList<>(messages.size());
    for (int i = 0; i < messages.size(); i++) {
      if (first.putIfAbsent(messages.get(i).eventId(), i) == null) {
        unique.add(i);
      }
    }
    process(messages, unique, out);
    for (int i = 0; i < out.length; i++) {
      if (out[i] == null) {
        Received r = out[first.get(messages.get(i).eventId())];
        out[i] = r == Received.APPLIED ? Received.DUPLICATE : r;
      }
    }
    return Arrays.asList(out);
  }

  /** Applies one message (see the class comment). */
  public Received receive(EventEnvelope message) {
    return receiveOne(message);
  }

  /** Applies the messages at {@code indices} (distinct ids, in order) into {@code out}. */
  private void process(List<EventEnvelope> all, List<Integer> indices, Received[] out) {
    if (indices.isEmpty()) {
      return;
    }
    if (indices.size() == 1) {
      out[indices.get(0)] = receiveOne(all.get(indices.get(0)));
      return;
    }
    List<EventEnvelope> batch = new ArrayList<>(indices.size());
    for (int i : indices) {
      batch.add(all.get(i));
    }
    int failedAt = -1;
    try {
      Received[] r = inOneTransaction(c -> batch);
      for (int k = 0; k < r.length; k++) {
        out[indices.get(k)] = r[k];
      }
      return;
    } catch (Exception | Error e) {
      // An Error (an AssertionError, a StackOverflowError in the handler) fails the batch like an
      // exception: it must not escape to the transport's thread and end its loop.
      if (e instanceof MessageFailedException named) {
        failedAt = indexOf(batch, named.failedMessage());
      }
      LOG.log(
          Level.FINE,
          failedAt >= 0
              ? name + ": " + e.getMessage() + "; the batch goes on without it"
              : name + ": a batch of " + batch.size() + " failed; one by one now",
          e);
    }
    if (failedAt >= 0) {
      // The ones before it again as a batch, it on its own, then the rest as a batch (but its
      // aggregate's later messages, if it failed: they wait for it).
      process(all, indices.subList(0, failedAt), out);
      out[indices.get(failedAt)] = receiveOne(batch.get(failedAt));
      process(
          all,
          holdBackBehindFailures(
              all,
              indices.subList(0, failedAt + 1),
              indices.subList(failedAt + 1, indices.size()),
              out),
          out);
    } else {
      // Which one failed is unknown: each on its own.
      List<Integer> rest = indices;
      while (!rest.isEmpty()) {
        int first = rest.get(0);
        out[first] = receiveOne(all.get(first));
        rest = holdBackBehindFailures(all, List.of(first), rest.subList(1, rest.size()), out);
      }
    }
  }

  private static int indexOf(List<EventEnvelope> batch, EventEnvelope m) {
    for (int k = 0; k < batch.size(); k++) {
      if (m != null && batch.get(k).eventId().equals(m.eventId())) {
        return k;
      }
    }
    return -1;
  }

  /**
   * Answers {@link Received#FAILED}, untried, each message at {@code later} whose aggregate has a
   * message at {@code tried} that failed (an aggregate's later messages wait for its failed one);
   * returns the others' indices, in order.
   */
  private static List<Integer> holdBackBehindFailures(
      List<EventEnvelope> all, List<Integer> tried, List<Integer> later, Received[] out) {
    Set<AggregateKey> failed = new HashSet<>();
    for (int i : tried) {
      if (out[i] == Received.FAILED) {
        failed.add(AggregateKey.of(all.get(i)));
      }
    }
    List<Integer> rest = new ArrayList<>(later.size());
    for (int i : later) {
      if (failed.contains(AggregateKey.of(all.get(i)))) {
        out[i] = Received.FAILED;
      } else {
        rest.add(i);
      }
    }
    return rest;
  }

  private Received receiveOne(EventEnvelope message) {
    try {
      return inOneTransaction(c -> List.of(message))[0];
    } catch (Exception | Error e) {
      Throwable cause =
          e instanceof MessageFailedException && e.getCause() != null ? e.getCause() : e;
      if (cause instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
        // The thread is being stopped (a relay's close() on the embedded transport, a consumer
        // shutting down): not the message's failure. Rolled back, no attempt counted; the
        // transport brings it again.
        Thread.currentThread().interrupt();
        LOG.log(Level.FINE, name + ": " + message.eventId() + " cut short by an interrupt");
        return Received.FAILED;
      }
      listener.consumeFailed(name);
      return recordFailure(message, cause);
    }
  }

  /** What one transaction decided, for the listener once it committed. */
  private static final class Tally {
    int stale;
    int held;
  }

  /** The messages a transaction applies, read in it first if need be (a re-queue's is). */
  @FunctionalInterface
  private interface Messages {
    List<EventEnvelope> in(Connection transaction) throws SQLException;
  }

  private Received[] inOneTransaction(Messages source) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        List<EventEnvelope> messages = source.in(c);
        if (messages.isEmpty()) {
          c.rollback();
          return new Received[0];
        }
        Received[] out = new Received[messages.size()];
        OffsetDateTime now = Outbox.utc(clock.instant());
        Tally tally = new Tally();
        List<EventEnvelope> toApply =
            sequenceStart == null
                ? claimAll(c, messages, now, out)
                : decideInSequence(c, messages, now, out, tally);
        if (!toApply.isEmpty()) {
          handler.applyAll(c, toApply);
          failIfAborted(c);
        }
        c.commit();
        report(out, tally);
        return out;
      } catch (Throwable t) {
        c.rollback();
        throw t;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    }
  }

  /**
   * Throws if the handler returned normally but left the transaction aborted: it caught an SQL
   * error (a constraint violation, a lock timeout) and went on, and PostgreSQL then refuses every
   * statement; its commit is a rollback, which the PostgreSQL driver reports as a successful
   * commit. Without this check the messages counted as applied (and were acknowledged) while
   * neither the handler's writes nor the inbox rows were kept. So it is the handler's failure, like
   * an exception it let through: rolled back, the attempt counted, nothing marked.
   */
  private static void failIfAborted(Connection c) throws SQLException {
    if (!aborted(c)) {
      return;
    }
    throw new IllegalStateException(
        "the handler returned but left the transaction aborted: it caught an SQL error and went"
            + " on. Let the error through, or roll back to a savepoint of its own before going on");
  }

  /**
   * Whether {@code c}'s transaction is aborted: the PostgreSQL driver's own state where it can be
   * reached (no round trip), else a statement PostgreSQL refuses in an aborted transaction.
   */
  private static boolean aborted(Connection c) throws SQLException {
    if (c.isWrapperFor(BaseConnection.class)) {
      return c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
    }
    try (Statement s = c.createStatement()) {
      s.execute("select 1");
      return false;
    } catch (SQLException e) {
      if (IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
        return true;
      }
      throw e;
    }
  }

  /** Claims every message; answers those to apply, and fills in the others' outcomes. */
  private List<EventEnvelope> claimAll(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now, Received[] out)
      throws SQLException {
    Set<UUID> claimed = claim(c, messages, now);
    Map<UUID, String> statuses = Map.of();
    if (claimed.size() < messages.size()) {
      List<UUID> others = new ArrayList<>();
      for (EventEnvelope m : messages) {
        if (!claimed.contains(m.eventId())) {
          others.add(m.eventId());
        }
      }
      statuses = statuses(c, others);
    }
    List<EventEnvelope> toApply = new ArrayList<>(claimed.size());
    for (int i = 0; i < messages.size(); i++) {
      EventEnvelope m = messages.get(i);
      if (claimed.contains(m.eventId())) {
        toApply.add(m);
        out[i] = Received.APPLIED;
      } else {
        out[i] = settled(m.eventId(), statuses.get(m.eventId()));
      }
    }
    return toApply;
  }

  /**
   * In sequence: locks the batch's aggregates, reads the messages' inbox rows, and decides each
   * message in order: apply (the aggregate's next), skip (behind it, or processed), hold (ahead of
   * it), or leave parked; then claims, holds and advances in three statements.
   */
  private List<EventEnvelope> decideInSequence(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now, Received[] out, Tally tally)
      throws SQLException {
    Map<AggregateKey, Long> last = lockSequences(c, messages, now);
    Map<AggregateKey, Long> advanced = new LinkedHashMap<>();
    if (sequenceStart == SequenceStart.FROM_ONE) {
      Map<AggregateKey, Long> adopted = appliedWithoutSequence(c, messages, last);
      last.putAll(adopted);
      advanced.putAll(adopted); // recorded, so held messages are released from there too
    }
    List<UUID> ids = new ArrayList<>(messages.size());
    for (EventEnvelope m : messages) {
      ids.add(m.eventId());
    }
    Map<UUID, String> status = statuses(c, ids);
    List<EventEnvelope> toClaim = new ArrayList<>();
    List<EventEnvelope> toApply = new ArrayList<>();
    List<EventEnvelope> toHold = new ArrayList<>();
    for (int i = 0; i < messages.size(); i++) {
      EventEnvelope m = messages.get(i);
      String st = status.get(m.eventId());
      AggregateKey aggregate = AggregateKey.of(m);
      Long applied = last.get(aggregate);
      Long expected = null; // FIRST_SEEN, nothing applied yet: whatever comes
      if (applied != null) {
        expected = applied + 1;
      } else if (sequenceStart == SequenceStart.FROM_ONE) {
        expected = 1L;
      }
      if ("PROCESSED".equals(st)) {
        out[i] = Received.DUPLICATE;
        if (expected == null || m.sequence() == expected) {
          // Applied, but not in sequence (before this consumer applied in sequence, or by one
          // that does not): the aggregate has it all the same.
          last.put(aggregate, m.sequence());
          advanced.put(aggregate, m.sequence());
        }
      } else if (expected != null && m.sequence() < expected) {
        // Behind: that sequence was applied (under another id). Settle a row it may have.
        out[i] = Received.DUPLICATE;
        tally.stale++;
        if (st != null && !"PARKED".equals(st)) {
          toClaim.add(m);
        }
      } else if ("PARKED".equals(st)) {
        out[i] = Received.PARKED; // the aggregate still waits for it: later ones are held
      } else if (expected == null || m.sequence() == expected) {
        out[i] = Received.APPLIED;
        toClaim.add(m);
        toApply.add(m);
        last.put(aggregate, m.sequence());
        advanced.put(aggregate, m.sequence());
      } else {
        out[i] = Received.HELD;
        if (!"HELD".equals(st)) {
          toHold.add(m);
        }
      }
    }
    if (!toClaim.isEmpty() && claim(c, toClaim, now).size() != toClaim.size()) {
      // Only a failure being recorded at this moment can have changed a row we read (it takes no
      // aggregate lock): decide again from the start.
      throw new IllegalStateException(name + ": an inbox row changed under the batch; again");
    }
    if (!toHold.isEmpty()) {
      hold(c, toHold, now);
      tally.held += toHold.size();
    }
    if (!advanced.isEmpty()) {
      advance(c, advanced, now);
    }
    return toApply;
  }

  private Set<UUID> claim(Connection c, List<EventEnvelope> messages, OffsetDateTime now)
      throws SQLException {
    // Sorted: concurrent batches take their rows' locks in the same order.
    UUID[] ids = messages.stream().map(EventEnvelope::eventId).sorted().toArray(UUID[]::new);
    Set<UUID> claimed = new HashSet<>();
    try (PreparedStatement s = c.prepareStatement(CLAIM)) {
      s.setString(1, name);
      s.setObject(2, now);
      s.setObject(3, now);
      s.setArray(4, c.createArrayOf("uuid", ids));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          claimed.add(rs.getObject(1, UUID.class));
        }
      }
    }
    return claimed;
  }

  private Map<UUID, String> statuses(Connection c, List<UUID> ids) throws SQLException {
    Map<UUID, String> out = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement(STATUSES)) {
      s.setString(1, name);
      s.setArray(2, c.createArrayOf("uuid", ids.toArray()));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getObject(1, UUID.class), rs.getString(2));
        }
      }
    }
    return out;
  }

  /** The outcome for a message whose row could not be claimed: processed, or parked. */
  private Received settled(UUID id, String status) {
    if (status == null) {
      throw new IllegalStateException("inbox row of " + id + " vanished");
    }
    return switch (status) {
      case "PARKED" -> Received.PARKED;
      case "HELD" -> Received.HELD;
      default -> Received.DUPLICATE;
    };
  }

  private Map<AggregateKey, Long> lockSequences(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now) throws SQLException {
    TreeSet<AggregateKey> aggregates = new TreeSet<>();
    for (EventEnvelope m : messages) {
      aggregates.add(AggregateKey.of(m));
    }
    String[] types = new String[aggregates.size()];
    String[] ids = new String[aggregates.size()];
    int n = 0;
    for (AggregateKey k : aggregates) {
      types[n] = k.type();
      ids[n++] = k.id();
    }
    Map<AggregateKey, Long> last = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement(LOCK_SEQUENCES)) {
      s.setString(1, name);
      s.setObject(2, now);
      s.setArray(3, c.createArrayOf("text", types));
      s.setArray(4, c.createArrayOf("text", ids));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          long v = rs.getLong(3);
          Long sequence = rs.wasNull() ? null : v;
          last.put(new AggregateKey(rs.getString(1), rs.getString(2)), sequence);
        }
      }
    }
    return last;
  }

  /**
   * For the batch's aggregates that have no sequence yet and whose first message here is not
   * sequence 1: the last sequence this consumer already applied without keeping sequences (see
   * {@link #APPLIED_WITHOUT_SEQUENCE}), for those it has any of. Without it, a consumer moved from
   * the embedded transport to Kafka would hold such an aggregate's next event for ever, waiting for
   * a sequence 1 it applied long ago and Kafka never carried. Runs under the aggregates' locks
   * ({@link #lockSequences}), so two deliveries cannot both adopt and apply.
   */
  private Map<AggregateKey, Long> appliedWithoutSequence(
      Connection c, List<EventEnvelope> messages, Map<AggregateKey, Long> last)
      throws SQLException {
    Map<AggregateKey, Long> lowest = new LinkedHashMap<>();
    for (EventEnvelope m : messages) {
      AggregateKey k = AggregateKey.of(m);
      if (last.get(k) == null) {
        lowest.merge(k, m.sequence(), Math::min);
      }
    }
    lowest.values().removeIf(sequence -> sequence <= 1);
    Map<AggregateKey, Long> adopted = new HashMap<>();
    if (lowest.isEmpty()) {
      return adopted;
    }
    String[] types = new String[lowest.size()];
    String[] ids = new String[lowest.size()];
    int n = 0;
    for (AggregateKey k : lowest.keySet()) {
      types[n] = k.type();
      ids[n++] = k.id();
    }
    try (PreparedStatement s = c.prepareStatement(APPLIED_WITHOUT_SEQUENCE)) {
      s.setArray(1, c.createArrayOf("text", types));
      s.setArray(2, c.createArrayOf("text", ids));
      s.setString(3, name);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          adopted.put(new AggregateKey(rs.getString(1), rs.getString(2)), rs.getLong(3));
        }
      }
    }
    return adopted;
  }

  private void advance(Connection c, Map<AggregateKey, Long> advanced, OffsetDateTime now)
      throws SQLException {
    String[] types = new String[advanced.size()];
    String[] ids = new String[advanced.size()];
    Long[] sequences = new Long[advanced.size()];
    int n = 0;
    for (Map.Entry<AggregateKey, Long> e : advanced.entrySet()) {
      types[n] = e.getKey().type();
      ids[n] = e.getKey().id();
      sequences[n++] = e.getValue();
    }
    try (PreparedStatement s = c.prepareStatement(ADVANCE)) {
      s.setObject(1, now);
      s.setArray(2, c.createArrayOf("text", types));
      s.setArray(3, c.createArrayOf("text", ids));
      s.setArray(4, c.createArrayOf("bigint", sequences));
      s.setString(5, name);
      s.executeUpdate();
    }
  }

  private void hold(Connection c, List<EventEnvelope> messages, OffsetDateTime now)
      throws SQLException {
    int n = messages.size();
    UUID[] ids = new UUID[n];
    String[] types = new String[n];
    String[] tenants = new String[n];
    String[] aggregateTypes = new String[n];
    String[] aggregateIds = new String[n];
    Long[] sequences = new Long[n];
    String[] occurredAt = new String[n];
    String[] payloads = new String[n];
    for (int k = 0; k < n; k++) {
      EventEnvelope m = messages.get(k);
      ids[k] = m.eventId();
      types[k] = m.type();
      tenants[k] = m.tenant();
      aggregateTypes[k] = m.aggregateType();
      aggregateIds[k] = m.aggregateId();
      sequences[k] = m.sequence();
      occurredAt[k] = m.occurredAt().toString();
      payloads[k] = m.payload();
    }
    try (PreparedStatement s = c.prepareStatement(HOLD)) {
      s.setString(1, name);
      s.setObject(2, now);
      s.setObject(3, now);
      s.setArray(4, c.createArrayOf("uuid", ids));
      s.setArray(5, c.createArrayOf("text", types));
      s.setArray(6, c.createArrayOf("text", tenants));
      s.setArray(7, c.createArrayOf("text", aggregateTypes));
      s.setArray(8, c.createArrayOf("text", aggregateIds));
      s.setArray(9, c.createArrayOf("bigint", sequences));
      s.setArray(10, c.createArrayOf("text", occurredAt));
      s.setArray(11, c.createArrayOf("text", payloads));
      s.executeUpdate();
    }
  }

  private void report(Received[] outcomes, Tally tally) {
    int applied = 0;
    int duplicates = 0;
    for (Received r : outcomes) {
      if (r == Received.APPLIED) {
        applied++;
      } else if (r == Received.DUPLICATE) {
        duplicates++;
      }
    }
    if (applied > 0) {
      listener.consumed(name, applied);
    }
    if (duplicates > tally.stale) {
      listener.duplicatesSkipped(name, duplicates - tally.stale);
    }
    if (tally.stale > 0) {
      listener.staleSkipped(name, tally.stale);
    }
    if (tally.held > 0) {
      listener.messagesHeld(name, tally.held);
    }
  }

  /** A failure as it is logged and stored: the exception's simple name and its message. */
  private static String describe(Throwable cause) {
    return cause.getClass().getSimpleName()
        + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
  }

  /** An error as the inbox row keeps it: at most 1,000 characters. */
  private static String stored(String error) {
    return error.length() > 1000 ? error.substring(0, 1000) : error;
  }

  /**
   * What a racing delivery or re-queue made of a message whose failure could not be recorded (its
   * row had moved on): read from its row, on {@code c}.
   */
  private Received settledMeanwhile(Connection c, UUID eventId) throws SQLException {
    try (PreparedStatement st = c.prepareStatement(STATUS)) {
      st.setString(1, name);
      st.setObject(2, eventId);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return settled(eventId, rs.getString(1));
      }
    }
  }

  private Received recordFailure(EventEnvelope m, Throwable cause) {
    String error = describe(cause);
    LOG.log(Level.WARNING, name + " failed on " + m.type() + " " + m.eventId() + ": " + error);
    LOG.log(Level.FINE, "The failure in full", cause);
    try (Connection c = Outbox.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(RECORD_FAILURE)) {
      s.setString(1, name);
      s.setObject(2, m.eventId());
      s.setInt(3, maxAttempts);
      s.setObject(4, Outbox.utc(clock.instant()));
      s.setString(5, stored(error));
      s.setString(6, m.type());
      s.setString(7, m.tenant());
      s.setString(8, m.aggregateType());
      s.setString(9, m.aggregateId());
      s.setLong(10, m.sequence());
      s.setObject(11, Outbox.utc(m.occurredAt()));
      s.setString(12, m.payload());
      s.setInt(13, maxAttempts);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          // A racing delivery processed (or parked) it meanwhile.
          return settledMeanwhile(c, m.eventId());
        }
        if ("PARKED".equals(rs.getString(1))) {
          listener.messageParked(name);
          return Received.PARKED;
        }
        return Received.FAILED;
      }
    } catch (SQLException e) {
      LOG.log(Level.WARNING, name + " could not record the failure of " + m.eventId(), e);
      return Received.FAILED;
    }
  }

  /**
   * Applies held messages whose gap has closed, lowest sequence first, until none is left or none
   * makes progress (one that fails stays held, its attempt counted, and is tried at the next call;
   * it is parked after the last allowed attempt). Call it now and then (a Kafka consumer does,
   * every {@code heldRetryInterval}); {@link #requeue} calls it too. Does nothing unless {@link
   * #inSequence()}.
   *
   * @return how many held messages were applied
   */
  public int releaseHeld() throws SQLException {
    return releaseHeldMessages().size();
  }

  /** {@link #releaseHeld}, answering the messages it applied, in the order it applied them. */
  public List<EventEnvelope> releaseHeldMessages() throws SQLException {
    if (sequenceStart == null) {
      return List.of();
    }
    List<EventEnvelope> released = new ArrayList<>();
    while (true) {
      List<EventEnvelope> batch = new ArrayList<>();
      try (Connection c = dataSource.getConnection();
          PreparedStatement s = c.prepareStatement(RELEASABLE)) {
        s.setString(1, name);
        s.setLong(2, sequenceStart == SequenceStart.FROM_ONE ? 1 : Long.MAX_VALUE);
        s.setInt(3, 200);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            batch.add(Outbox.envelope(rs));
          }
        }
      }
      if (batch.isEmpty()) {
        break;
      }
      int progress = 0;
      List<Received> outcomes = receive(batch);
      for (int k = 0; k < batch.size(); k++) {
        Received r = outcomes.get(k);
        if (r == Received.APPLIED) {
          released.add(batch.get(k));
        }
        if (r != Received.FAILED && r != Received.HELD) {
          progress++;
        }
      }
      if (progress == 0) {
        break;
      }
    }
    if (!released.isEmpty()) {
      listener.heldReleased(name, released.size());
    }
    return released;
  }

  /** A message held behind a gap in its aggregate's sequence, for operators. */
  public record HeldMessage(EventEnvelope message, long lastApplied, Instant heldAt) {}

  /** Up to {@code limit} of this consumer's held messages, longest held first. */
  public List<HeldMessage> held(int limit) throws SQLException {
    List<HeldMessage> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(HELD)) {
      s.setString(1, name);
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new HeldMessage(
                  Outbox.envelope(rs),
                  rs.getLong("last_applied"),
                  rs.getObject("held_at", OffsetDateTime.class).toInstant()));
        }
      }
    }
    return out;
  }

  /** How many messages are held, and since when the oldest (null if none). */
  public record HeldSummary(long count, Instant oldestHeldAt) {}

  /** This consumer's held messages: how many, and the oldest's time; for meters and operators. */
  public HeldSummary heldSummary() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(HELD_SUMMARY)) {
      s.setString(1, name);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        OffsetDateTime oldest = rs.getObject(2, OffsetDateTime.class);
        return new HeldSummary(rs.getLong(1), oldest == null ? null : oldest.toInstant());
      }
    }
  }

  /** An aggregate, ordered by type then id (the order its sequence row is locked in). */
  private record AggregateKey(String type, String id) implements Comparable<AggregateKey> {
    static AggregateKey of(EventEnvelope m) {
      return new AggregateKey(m.aggregateType(), m.aggregateId());
    }

    @Override
    public int compareTo(AggregateKey o) {
      int t = type.compareTo(o.type);
      return t != 0 ? t : id.compareTo(o.id);
    }
  }

  /** A parked message, for operators. */
  public record ParkedMessage(EventEnvelope message, int attempts, String lastError) {}

  /** Up to {@code limit} of this consumer's parked messages, oldest first. */
  public List<ParkedMessage> parked(int limit) throws SQLException {
    List<ParkedMessage> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(PARKED)) {
      s.setString(1, name);
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new ParkedMessage(
                  new EventEnvelope(
                      rs.getObject("message_id", UUID.class),
                      rs.getString("event_type"),
                      rs.getString("tenant"),
                      rs.getString("aggregate_type"),
                      rs.getString("aggregate_id"),
                      rs.getLong("sequence"),
                      rs.getObject("occurred_at", OffsetDateTime.class).toInstant(),
                      rs.getString("payload")),
                  rs.getInt("attempts"),
                  rs.getString("last_error")));
        }
      }
    }
    return out;
  }

  /** How many of this consumer's messages are parked. */
  public long parkedCount() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(PARKED_COUNT)) {
      s.setString(1, name);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Re-queues a parked message (after its cause was fixed) and applies it now, from the envelope
   * the inbox kept: the transport acknowledged it when it was parked and will not bring it again.
   * The row is unparked in the transaction that applies the message, so the message is parked or
   * applied, never in between, whatever crashes (see {@link #unpark}). A failure rolls that back:
   * it stays parked, the attempt counted and its error kept. In sequence, it is held if an earlier
   * message of its aggregate is still parked (re-queue them in sequence order), and the messages it
   * held back are applied after it.
   *
   * @return the outcome, or {@code null} if no such message was parked
   */
  public Received requeue(UUID messageId) throws SQLException {
    EventEnvelope[] unparked = new EventEnvelope[1];
    Received r;
    try {
      Received[] out =
          inOneTransaction(
              c -> {
                unparked[0] = unpark(c, messageId);
                return unparked[0] == null ? List.of() : List.of(unparked[0]);
              });
      if (out.length == 0) {
        return null;
      }
      r = out[0];
    } catch (Exception | Error e) {
      if (unparked[0] == null) { // the unpark itself failed: nothing was tried
        if (e instanceof SQLException sql) {
          throw sql;
        }
        throw new SQLException(name + ": could not re-queue " + messageId, e);
      }
      listener.consumeFailed(name);
      Throwable cause =
          e instanceof MessageFailedException && e.getCause() != null ? e.getCause() : e;
      r = recordRequeueFailure(unparked[0], cause);
    }
    releaseHeld(); // what it held back, if it was applied
    return r;
  }

  /**
   * Makes the parked message claimable in {@code c}'s transaction and answers its envelope, or null
   * if it is not parked.
   *
   * <p>Why in the applying transaction: the transport acknowledged a parked message and never
   * brings it again, so its row is the only trace of it. Unparked in a transaction of its own, a
   * crash before the apply committed left it {@code FAILED}: neither parked (operators no longer
   * saw it, nor could re-queue it) nor applied, for ever. Here the unpark commits with the apply or
   * not at all. Two re-queues of one message meet at the row: the second waits for the first's
   * commit, then finds it applied (answers null) or, if the first rolled back, parked, and tries.
   * The row is locked before its aggregate's sequence row (the reverse of a batch's order), which
   * cannot deadlock: a batch never writes a row it read {@code PARKED}, and this one was parked.
   */
  private EventEnvelope unpark(Connection c, UUID messageId) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(UNPARK)) {
      s.setString(1, name);
      s.setObject(2, messageId);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? Outbox.envelope(rs) : null;
      }
    }
  }

  /**
   * A re-queued message failed: its transaction rolled back, so the row is parked again as it was;
   * counts the attempt and keeps the error on it.
   */
  private Received recordRequeueFailure(EventEnvelope m, Throwable cause) {
    String error = describe(cause);
    LOG.log(
        Level.WARNING,
        name + " failed on re-queued " + m.type() + " " + m.eventId() + ": " + error);
    LOG.log(Level.FINE, "The failure in full", cause);
    try (Connection c = Outbox.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(REQUEUE_FAILED)) {
      s.setString(1, stored(error));
      s.setString(2, name);
      s.setObject(3, m.eventId());
      if (s.executeUpdate() == 0) {
        // A racing re-queue applied it meanwhile.
        return settledMeanwhile(c, m.eventId());
      }
    } catch (SQLException e) {
      LOG.log(Level.WARNING, name + " could not record the failure of " + m.eventId(), e);
    }
    listener.messageParked(name);
    return Received.PARKED;
  }

  /**
   * Forgets messages processed longer ago than the retention; answers how many. A consumer in
   * sequence from the first message seen ({@link SequenceStart#FIRST_SEEN}) also forgets the
   * aggregates that nothing was applied to for as long and that have no message waiting (held,
   * failed, parked): their rows in {@code idemkit_inbox_sequence} go, and an aggregate's next
   * message is then the first one seen, applied, as its row would have had it.
   *
   * <p>A consumer from sequence 1 ({@link SequenceStart#FROM_ONE}) keeps every aggregate's row: one
   * it forgot would hold the aggregate's next message for a sequence 1 that never comes again, and
   * it cannot tell a finished aggregate from one whose next event is only later.
   *
   * <p>Deletes in batches of {@value #CLEANUP_BATCH} rows, each in a transaction of its own, and
   * passes by rows another transaction holds ({@code SKIP LOCKED}): safe to run on every instance
   * at once (they share the rows rather than wait for each other), and it never waits for a
   * consumer's batch.
   */
  public int deleteProcessed() throws SQLException {
    OffsetDateTime cutoff = Outbox.utc(clock.instant().minus(retention));
    int deleted;
    try (Connection c = Outbox.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(DELETE_PROCESSED)) {
      deleted =
          Outbox.inBatches(
              CLEANUP_BATCH,
              () -> {
                s.setString(1, name);
                s.setString(2, name);
                s.setObject(3, cutoff);
                s.setInt(4, CLEANUP_BATCH);
                return s.executeUpdate();
              });
    }
    if (sequenceStart == SequenceStart.FIRST_SEEN) {
      int forgotten = forgetIdleAggregates(cutoff);
      LOG.log(Level.FINE, () -> name + ": forgot " + forgotten + " idle aggregate(s)");
    }
    return deleted;
  }

  /**
   * Deletes the sequence rows ({@code idemkit_inbox_sequence}) of aggregates that nothing was
   * applied to since {@code cutoff} (now minus the retention) and that have no message waiting in
   * the inbox ({@code HELD}, {@code FAILED}, {@code PARKED}), in batches of {@value
   * #CLEANUP_BATCH}, one transaction each; answers how many.
   *
   * <p>Why that is safe: every message applied to such an aggregate was first delivered before the
   * cutoff, and the retention exceeds the transport's redelivery horizon ({@link Builder#build}),
   * so none of them can be delivered again. The aggregate's next message is then the first one
   * seen, applied, as the row would have had it (it comes after everything applied). A waiting
   * message is decided against the row (a held one with no row would be released ahead of its gap),
   * so its aggregate keeps it.
   *
   * <p>{@link SequenceStart#FIRST_SEEN} only: see {@link #deleteProcessed}.
   *
   * <p>The race, a batch of the same aggregate meeting this cleanup: the cleanup locks with {@code
   * SKIP LOCKED} (a row a batch holds is in use; the cleanup never waits, so no deadlock), then
   * asks for waiting messages again in a second statement, whose snapshot, taken once the locks are
   * held, sees what any batch that held the row before committed (a batch writes an aggregate's
   * inbox rows only under its row's lock). A batch that comes for the row after the lock waits for
   * the cleanup to commit; its upsert ({@code LOCK_SEQUENCES}) then inserts a new row: the
   * aggregate is new to it. A failure recorded meanwhile takes no row lock; the failed message is
   * then the first seen of its aggregate when delivered again, applied, as it would have been with
   * the row (it was the next one).
   */
  private int forgetIdleAggregates(OffsetDateTime cutoff) throws SQLException {
    int forgotten = 0;
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        int locked;
        do {
          List<String> types = new ArrayList<>();
          List<String> ids = new ArrayList<>();
          try (PreparedStatement s = c.prepareStatement(LOCK_IDLE_SEQUENCES)) {
            s.setString(1, name);
            s.setObject(2, cutoff);
            s.setInt(3, CLEANUP_BATCH);
            try (ResultSet rs = s.executeQuery()) {
              while (rs.next()) {
                types.add(rs.getString(1));
                ids.add(rs.getString(2));
              }
            }
          }
          locked = types.size();
          if (locked > 0) {
            try (PreparedStatement s = c.prepareStatement(DELETE_IDLE_SEQUENCES)) {
              s.setArray(1, c.createArrayOf("text", types.toArray()));
              s.setArray(2, c.createArrayOf("text", ids.toArray()));
              s.setString(3, name);
              forgotten += s.executeUpdate();
            }
          }
          c.commit();
        } while (locked == CLEANUP_BATCH);
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    }
    return forgotten;
  }

  /** Configures a consumer. */
  public static final class Builder {
    private final String name;
    private final DataSource dataSource;
    private final MessageHandler handler;
    private int maxAttempts = 5;
    private Duration retention = Duration.ofDays(14);
    private Duration redeliveryHorizon;
    private Clock clock = Clock.systemUTC();
    private OutboxListener listener = OutboxListener.NONE;
    private SequenceStart sequenceStart;

    private Builder(String name, DataSource dataSource, MessageHandler handler) {
      this.name = Objects.requireNonNull(name, "name");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** A message is parked after failing this many times (default 5; at least 1). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * How long processed message ids are remembered (default 14 days): positive, and longer than
     * the {@link #redeliveryHorizon redelivery horizon}.
     */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention);
      return this;
    }

    /**
     * The transport's {@link dev.idemkit.outbox.spi.EventTransport#redeliveryHorizon() redelivery
     * horizon}: required, positive, and the retention must exceed it.
     */
    public Builder redeliveryHorizon(Duration redeliveryHorizon) {
      this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    public Builder listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * Applies each aggregate's messages in sequence, holding those that come ahead of it (see the
     * class comment); {@code start} says what is expected of an aggregate with no record. For
     * transports that may deliver an aggregate's events out of order or past a parked one (Kafka);
     * the embedded transport needs it only to hold an aggregate's events behind a parked one.
     */
    public Builder inSequence(SequenceStart start) {
      this.sequenceStart = Objects.requireNonNull(start);
      return this;
    }

    /**
     * The consumer.
     *
     * @throws IllegalStateException if no redelivery horizon was given, or the retention does not
     *     exceed it: a redelivery after the inbox forgot the message would apply it twice
     * @throws IllegalArgumentException naming the setting and its value, if {@code maxAttempts} is
     *     below 1, or the retention or the redelivery horizon zero or negative
     */
    public InboxConsumer build() {
      String part = "Inbox consumer " + name;
      Settings.atLeastOne(part, "maxAttempts", maxAttempts);
      Settings.positive(part, "retention", retention);
      if (redeliveryHorizon == null) {
        throw new IllegalStateException(
            "Inbox consumer "
                + name
                + ": set redeliveryHorizon(transport.redeliveryHorizon()) so the inbox can check"
                + " that it remembers messages for longer than the transport may redeliver them");
      }
      Settings.positive(part, "redeliveryHorizon", redeliveryHorizon);
      if (retention.compareTo(redeliveryHorizon) <= 0) {
        throw new IllegalStateException(
            "Inbox consumer "
                + name
                + " refuses to start: its retention ("
                + retention
                + ") must exceed the transport's redelivery horizon ("
                + redeliveryHorizon
                + "), or a late redelivery of a forgotten message would be applied twice."
                + " Raise the retention.");
      }
      return new InboxConsumer(this);
    }
  }
}
