package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The sequence gate of a consumer {@linkplain InboxConsumer.Builder#inSequence in sequence}: each
 * aggregate's last applied sequence ({@code idemkit_inbox_sequence}), locked by the batch that
 * decides the aggregate's messages, and the decision for each message: apply (the aggregate's
 * next), skip (behind it), hold (ahead of it: {@code HELD}, with its envelope, until {@link
 * HeldMessages#release} applies it), or leave parked.
 */
final class SequenceGate {

  /**
   * Locks the batch's aggregates' sequence rows (creating missing ones, with no sequence yet, named
   * after their tenant so that they move with it) and answers their last applied sequences. A
   * second delivery of one of these aggregates waits here until this transaction ends, then reads
   * what it committed.
   */
  private static final String LOCK_SEQUENCES =
      """
      insert into idemkit_inbox_sequence as s (consumer_name, aggregate_type, aggregate_id,
                                               last_sequence, applied_at, tenant)
      select ?, u.aggregate_type, u.aggregate_id, null, ?, u.tenant
        from unnest(?::text[], ?::text[], ?::text[]) as u(aggregate_type, aggregate_id, tenant)
      on conflict (consumer_name, aggregate_type, aggregate_id)
      do update set last_sequence = s.last_sequence, tenant = coalesce(s.tenant, excluded.tenant)
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

  /** What the gate decided in one transaction, for the listener once it committed. */
  static final class Tally {
    int stale;
    int held;
  }

  private final InboxRows rows;

  private final InboxConfig inbox;

  SequenceGate(InboxConfig config, InboxRows rows) {
    this.inbox = config;
    this.rows = rows;
  }

  /**
   * In sequence: locks the batch's aggregates, reads the messages' inbox rows, and decides each
   * message in order: apply (the aggregate's next), skip (behind it, or processed), hold (ahead of
   * it), or leave parked; then claims, holds and advances in three statements.
   */
  List<EventEnvelope> decide(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now, Received[] out, Tally tally)
      throws SQLException {
    Map<AggregateKey, Long> last = lockSequences(c, messages, now);
    Map<AggregateKey, Long> advanced = new LinkedHashMap<>();
    if (inbox.sequenceStart() == SequenceStart.FROM_ONE) {
      Map<AggregateKey, Long> adopted = appliedWithoutSequence(c, messages, last);
      last.putAll(adopted);
      advanced.putAll(adopted); // recorded, so held messages are released from there too
    }
    List<UUID> ids = new ArrayList<>(messages.size());
    for (EventEnvelope m : messages) {
      ids.add(m.eventId());
    }
    Map<UUID, String> status = rows.statuses(c, ids);
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
      } else if (inbox.sequenceStart() == SequenceStart.FROM_ONE) {
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
    if (!toClaim.isEmpty() && rows.claim(c, toClaim, now).size() != toClaim.size()) {
      // Only a failure being recorded at this moment can have changed a row we read (it takes no
      // aggregate lock): decide again from the start.
      throw new IllegalStateException(
          inbox.name() + ": an inbox row changed under the batch; again");
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

  private Map<AggregateKey, Long> lockSequences(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now) throws SQLException {
    TreeMap<AggregateKey, String> aggregates = new TreeMap<>();
    for (EventEnvelope m : messages) {
      aggregates.putIfAbsent(AggregateKey.of(m), m.tenant());
    }
    String[] types = new String[aggregates.size()];
    String[] ids = new String[aggregates.size()];
    String[] tenants = new String[aggregates.size()];
    int n = 0;
    for (Map.Entry<AggregateKey, String> k : aggregates.entrySet()) {
      types[n] = k.getKey().type();
      ids[n] = k.getKey().id();
      tenants[n++] = k.getValue();
    }
    Map<AggregateKey, Long> last = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement(LOCK_SEQUENCES)) {
      s.setString(1, inbox.name());
      s.setObject(2, now);
      s.setArray(3, c.createArrayOf("text", types));
      s.setArray(4, c.createArrayOf("text", ids));
      s.setArray(5, c.createArrayOf("text", tenants));
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
      s.setString(3, inbox.name());
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
      s.setString(5, inbox.name());
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
      s.setString(1, inbox.name());
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
}
