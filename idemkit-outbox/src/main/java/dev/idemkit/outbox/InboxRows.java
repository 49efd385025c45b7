package dev.idemkit.outbox;

import dev.idemkit.jdbc.Transactions;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One consumer's rows in {@code idemkit_inbox}, one message each: claiming them for a transaction,
 * reading their status, and recording a failed attempt (parking the message at the last one). The
 * {@link InboxBatch batches}, the {@link SequenceGate sequence gate} and the {@link ParkedMessages
 * re-queue} write and read rows through here.
 */
final class InboxRows {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

  /**
   * Claims messages for this transaction, in one statement: new rows, or rows left {@code FAILED}
   * by an earlier attempt or {@code HELD}. Returns the ids claimed; a {@code PROCESSED} or {@code
   * PARKED} row is not. A processed row keeps only its message's tenant of the envelope: a tenant's
   * rows move with it to another database (docs/scaling.md). A row another transaction inserted or
   * claimed and has not committed yet makes this one wait, then decide on the committed outcome.
   */
  private static final String CLAIM =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      processed_at, tenant)
      select ?, u.id, 'PROCESSED', 0, ?, ?, u.tenant
        from unnest(?::uuid[], ?::text[]) as u(id, tenant)
      on conflict (consumer_name, message_id) do update
         set status = 'PROCESSED', processed_at = excluded.processed_at, last_error = null,
             held_at = null, event_type = null, tenant = excluded.tenant, aggregate_type = null,
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

  private final InboxConfig inbox;

  InboxRows(InboxConfig config) {
    this.inbox = config;
  }

  Set<UUID> claim(Connection c, List<EventEnvelope> messages, OffsetDateTime now)
      throws SQLException {
    // Sorted: concurrent batches take their rows' locks in the same order.
    List<EventEnvelope> sorted =
        messages.stream().sorted(Comparator.comparing(EventEnvelope::eventId)).toList();
    UUID[] ids = sorted.stream().map(EventEnvelope::eventId).toArray(UUID[]::new);
    String[] tenants = sorted.stream().map(EventEnvelope::tenant).toArray(String[]::new);
    Set<UUID> claimed = new HashSet<>();
    try (PreparedStatement s = c.prepareStatement(CLAIM)) {
      s.setString(1, inbox.name());
      s.setObject(2, now);
      s.setObject(3, now);
      s.setArray(4, c.createArrayOf("uuid", ids));
      s.setArray(5, c.createArrayOf("text", tenants));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          claimed.add(rs.getObject(1, UUID.class));
        }
      }
    }
    return claimed;
  }

  Map<UUID, String> statuses(Connection c, List<UUID> ids) throws SQLException {
    Map<UUID, String> out = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement(STATUSES)) {
      s.setString(1, inbox.name());
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
  Received settled(UUID id, String status) {
    if (status == null) {
      throw new IllegalStateException("inbox row of " + id + " vanished");
    }
    return switch (status) {
      case "PARKED" -> Received.PARKED;
      case "HELD" -> Received.HELD;
      default -> Received.DUPLICATE;
    };
  }

  /** A failure as it is logged and stored: the exception's simple name and its message. */
  static String describe(Throwable cause) {
    return cause.getClass().getSimpleName()
        + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
  }

  /** An error as the inbox row keeps it: at most 1,000 characters. */
  static String stored(String error) {
    return error.length() > 1000 ? error.substring(0, 1000) : error;
  }

  /**
   * What a racing delivery or re-queue made of a message whose failure could not be recorded (its
   * row had moved on): read from its row, on {@code c}.
   */
  Received settledMeanwhile(Connection c, UUID eventId) throws SQLException {
    try (PreparedStatement st = c.prepareStatement(STATUS)) {
      st.setString(1, inbox.name());
      st.setObject(2, eventId);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return settled(eventId, rs.getString(1));
      }
    }
  }

  Received recordFailure(EventEnvelope m, Throwable cause) {
    String error = describe(cause);
    LOG.log(
        Level.WARNING, inbox.name() + " failed on " + m.type() + " " + m.eventId() + ": " + error);
    LOG.log(Level.FINE, "The failure in full", cause);
    try (Connection c = Transactions.autoCommitting(inbox.dataSource());
        PreparedStatement s = c.prepareStatement(RECORD_FAILURE)) {
      s.setString(1, inbox.name());
      s.setObject(2, m.eventId());
      s.setInt(3, inbox.maxAttempts());
      s.setObject(4, Outbox.utc(inbox.clock().instant()));
      s.setString(5, stored(error));
      s.setString(6, m.type());
      s.setString(7, m.tenant());
      s.setString(8, m.aggregateType());
      s.setString(9, m.aggregateId());
      s.setLong(10, m.sequence());
      s.setObject(11, Outbox.utc(m.occurredAt()));
      s.setString(12, m.payload());
      s.setInt(13, inbox.maxAttempts());
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          // A racing delivery processed (or parked) it meanwhile.
          return settledMeanwhile(c, m.eventId());
        }
        if ("PARKED".equals(rs.getString(1))) {
          inbox.listener().messageParked(inbox.name());
          return Received.PARKED;
        }
        return Received.FAILED;
      }
    } catch (SQLException e) {
      LOG.log(Level.WARNING, inbox.name() + " could not record the failure of " + m.eventId(), e);
      return Received.FAILED;
    }
  }
}
