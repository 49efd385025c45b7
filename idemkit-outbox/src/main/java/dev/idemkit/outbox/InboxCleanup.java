package dev.idemkit.outbox;

import dev.idemkit.jdbc.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Forgetting what a consumer no longer needs: processed ids past the retention, and (from the first
 * message seen) the sequences of aggregates idle for as long.
 */
final class InboxCleanup {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

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

  private final InboxConfig inbox;

  InboxCleanup(InboxConfig config) {
    this.inbox = config;
  }

  /** See {@link InboxConsumer#deleteProcessed}. */
  int deleteProcessed() throws SQLException {
    OffsetDateTime cutoff = Outbox.utc(inbox.clock().instant().minus(inbox.retention()));
    int deleted;
    try (Connection c = Transactions.autoCommitting(inbox.dataSource());
        PreparedStatement s = c.prepareStatement(DELETE_PROCESSED)) {
      deleted =
          Outbox.inBatches(
              CLEANUP_BATCH,
              () -> {
                s.setString(1, inbox.name());
                s.setString(2, inbox.name());
                s.setObject(3, cutoff);
                s.setInt(4, CLEANUP_BATCH);
                return s.executeUpdate();
              });
    }
    if (inbox.sequenceStart() == SequenceStart.FIRST_SEEN) {
      int forgotten = forgetIdleAggregates(cutoff);
      LOG.log(Level.FINE, () -> inbox.name() + ": forgot " + forgotten + " idle aggregate(s)");
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
   * cutoff, and the retention exceeds the transport's redelivery horizon ({@link
   * InboxConsumer.Builder#build}), so none of them can be delivered again. The aggregate's next
   * message is then the first one seen, applied, as the row would have had it (it comes after
   * everything applied). A waiting message is decided against the row (a held one with no row would
   * be released ahead of its gap), so its aggregate keeps it.
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
    Forgotten batch;
    do {
      batch = Transactions.inTransaction(inbox.dataSource(), c -> forgetIdleBatch(c, cutoff));
      forgotten += batch.deleted();
    } while (batch.locked() == CLEANUP_BATCH);
    return forgotten;
  }

  /** One batch of {@link #forgetIdleAggregates}: rows locked, and of those, rows deleted. */
  private record Forgotten(int locked, int deleted) {}

  private Forgotten forgetIdleBatch(Connection c, OffsetDateTime cutoff) throws SQLException {
    List<String> types = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    try (PreparedStatement s = c.prepareStatement(LOCK_IDLE_SEQUENCES)) {
      s.setString(1, inbox.name());
      s.setObject(2, cutoff);
      s.setInt(3, CLEANUP_BATCH);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          types.add(rs.getString(1));
          ids.add(rs.getString(2));
        }
      }
    }
    if (types.isEmpty()) {
      return new Forgotten(0, 0);
    }
    try (PreparedStatement s = c.prepareStatement(DELETE_IDLE_SEQUENCES)) {
      s.setArray(1, c.createArrayOf("text", types.toArray()));
      s.setArray(2, c.createArrayOf("text", ids.toArray()));
      s.setString(3, inbox.name());
      return new Forgotten(types.size(), s.executeUpdate());
    }
  }
}
