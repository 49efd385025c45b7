package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * A consumer's held messages (in sequence, ahead of a gap in their aggregate): releasing those
 * whose gap has closed, and the operators' view of them ({@link InboxConsumer#held}, {@link
 * InboxConsumer#heldSummary}).
 */
final class HeldMessages {

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

  private final InboxBatch batches;

  private final InboxConfig inbox;

  HeldMessages(InboxConfig config, InboxBatch batches) {
    this.inbox = config;
    this.batches = batches;
  }

  /** See {@link InboxConsumer#releaseHeldMessages}. */
  List<EventEnvelope> release() throws SQLException {
    if (inbox.sequenceStart() == null) {
      return List.of();
    }
    List<EventEnvelope> released = new ArrayList<>();
    while (true) {
      List<EventEnvelope> batch = new ArrayList<>();
      try (Connection c = inbox.dataSource().getConnection();
          PreparedStatement s = c.prepareStatement(RELEASABLE)) {
        s.setString(1, inbox.name());
        s.setLong(2, inbox.sequenceStart() == SequenceStart.FROM_ONE ? 1 : Long.MAX_VALUE);
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
      List<Received> outcomes = batches.receive(batch);
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
      inbox.listener().heldReleased(inbox.name(), released.size());
    }
    return released;
  }

  /** See {@link InboxConsumer#held}. */
  List<InboxConsumer.HeldMessage> held(int limit) throws SQLException {
    List<InboxConsumer.HeldMessage> out = new ArrayList<>();
    try (Connection c = inbox.dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(HELD)) {
      s.setString(1, inbox.name());
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new InboxConsumer.HeldMessage(
                  Outbox.envelope(rs),
                  rs.getLong("last_applied"),
                  rs.getObject("held_at", OffsetDateTime.class).toInstant()));
        }
      }
    }
    return out;
  }

  /** See {@link InboxConsumer#heldSummary}. */
  InboxConsumer.HeldSummary heldSummary() throws SQLException {
    try (Connection c = inbox.dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(HELD_SUMMARY)) {
      s.setString(1, inbox.name());
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        OffsetDateTime oldest = rs.getObject(2, OffsetDateTime.class);
        return new InboxConsumer.HeldSummary(
            rs.getLong(1), oldest == null ? null : oldest.toInstant());
      }
    }
  }
}
