package dev.idemkit.outbox;

import dev.idemkit.jdbc.Transactions;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A consumer's parked messages (failed {@code maxAttempts} times): the operators' view of them and
 * their re-queue, which applies one again from the envelope its row kept.
 */
final class ParkedMessages {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

  private static final String PARKED =
      """
      select message_id as event_id, event_type, tenant, aggregate_type, aggregate_id, sequence,
             occurred_at, payload, attempts, last_error
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

  private final InboxRows rows;
  private final InboxBatch batches;
  private final HeldMessages held;

  private final InboxConfig inbox;

  ParkedMessages(InboxConfig config, InboxRows rows, InboxBatch batches, HeldMessages held) {
    this.inbox = config;
    this.rows = rows;
    this.batches = batches;
    this.held = held;
  }

  /** See {@link InboxConsumer#parked}. */
  List<InboxConsumer.ParkedMessage> parked(int limit) throws SQLException {
    List<InboxConsumer.ParkedMessage> out = new ArrayList<>();
    try (Connection c = inbox.dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(PARKED)) {
      s.setString(1, inbox.name());
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new InboxConsumer.ParkedMessage(
                  Outbox.envelope(rs), rs.getInt("attempts"), rs.getString("last_error")));
        }
      }
    }
    return out;
  }

  /** See {@link InboxConsumer#parkedCount}. */
  long parkedCount() throws SQLException {
    try (Connection c = inbox.dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(PARKED_COUNT)) {
      s.setString(1, inbox.name());
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** See {@link InboxConsumer#requeue}. */
  Received requeue(UUID messageId) throws SQLException {
    EventEnvelope[] unparked = new EventEnvelope[1];
    Received r;
    try {
      Received[] out =
          batches.apply(
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
        throw new SQLException(inbox.name() + ": could not re-queue " + messageId, e);
      }
      inbox.listener().consumeFailed(inbox.name());
      Throwable cause =
          e instanceof MessageFailedException && e.getCause() != null ? e.getCause() : e;
      r = recordRequeueFailure(unparked[0], cause);
    }
    held.release(); // what it held back, if it was applied
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
      s.setString(1, inbox.name());
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
    String error = InboxRows.describe(cause);
    LOG.log(
        Level.WARNING,
        inbox.name() + " failed on re-queued " + m.type() + " " + m.eventId() + ": " + error);
    LOG.log(Level.FINE, "The failure in full", cause);
    try (Connection c = Transactions.autoCommitting(inbox.dataSource());
        PreparedStatement s = c.prepareStatement(REQUEUE_FAILED)) {
      s.setString(1, InboxRows.stored(error));
      s.setString(2, inbox.name());
      s.setObject(3, m.eventId());
      if (s.executeUpdate() == 0) {
        // A racing re-queue applied it meanwhile.
        return rows.settledMeanwhile(c, m.eventId());
      }
    } catch (SQLException e) {
      LOG.log(Level.WARNING, inbox.name() + " could not record the failure of " + m.eventId(), e);
    }
    inbox.listener().messageParked(inbox.name());
    return Received.PARKED;
  }
}
