package dev.idemkit.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The relay's {@linkplain OutboxRelay.Builder#aggregateWindow aggregate window}: a round that
 * picked an aggregate's oldest unsent event also takes the events that follow it, up to the
 * window's size in all, in sequence.
 */
final class AggregateWindow {

  /**
   * With an {@link Builder#aggregateWindow aggregate window} of n: the unsent events that follow
   * the picked ones in their aggregates, up to n - 1 each, due and not parked. Only the relay that
   * holds an aggregate's oldest unsent event takes its followers (another relay's pick sees that
   * older one unsent and passes the aggregate by), so an aggregate's events are in one relay's
   * hands at a time; the caller keeps each aggregate's unbroken run after its picked event.
   */
  private static final String FOLLOWERS =
      """
      select e.event_id, e.event_type, e.tenant, e.aggregate_type, e.aggregate_id, e.sequence,
             e.occurred_at, e.payload, e.attempts
        from idemkit_outbox e
        join unnest(?::text[], ?::text[], ?::bigint[]) as h(aggregate_type, aggregate_id, sequence)
          on e.aggregate_type = h.aggregate_type
         and e.aggregate_id = h.aggregate_id
         and e.sequence > h.sequence
         and e.sequence < h.sequence + ?
       where e.sent_at is null
         and e.parked_at is null
         and e.next_attempt_at <= ?
       order by e.aggregate_type, e.aggregate_id, e.sequence
         for update of e skip locked
      """;

  private final int batchSize;
  private final int size;

  AggregateWindow(int batchSize, int size) {
    this.batchSize = batchSize;
    this.size = size;
  }

  /** Events an aggregate may have in one round (1: no followers). */
  int size() {
    return size;
  }

  /**
   * Adds to {@code batch} the events that follow its picked ones in their aggregates (see {@link
   * #FOLLOWERS}), each right after the one before it, so the transport gets an aggregate's events
   * in sequence; stops an aggregate at its first missing number (not due, parked, or locked), and
   * the batch at the batch size.
   */
  void addFollowers(Connection c, Instant now, List<EventEnvelope> batch, List<Integer> attempts)
      throws SQLException {
    int heads = batch.size();
    String[] types = new String[heads];
    String[] ids = new String[heads];
    Long[] sequences = new Long[heads];
    Map<String, Integer> headAt = new HashMap<>();
    for (int i = 0; i < heads; i++) {
      EventEnvelope e = batch.get(i);
      types[i] = e.aggregateType();
      ids[i] = e.aggregateId();
      sequences[i] = e.sequence();
      headAt.put(e.aggregateType() + '\u0000' + e.aggregateId(), i);
    }
    List<List<EventEnvelope>> runs = new ArrayList<>();
    List<List<Integer>> runAttempts = new ArrayList<>();
    for (int i = 0; i < heads; i++) {
      runs.add(new ArrayList<>());
      runAttempts.add(new ArrayList<>());
    }
    int room = batchSize - heads;
    try (PreparedStatement s = c.prepareStatement(FOLLOWERS)) {
      s.setArray(1, c.createArrayOf("text", types));
      s.setArray(2, c.createArrayOf("text", ids));
      s.setArray(3, c.createArrayOf("bigint", sequences));
      s.setInt(4, size);
      s.setObject(5, Outbox.utc(now));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next() && room > 0) {
          EventEnvelope e = Outbox.envelope(rs);
          int h = headAt.get(e.aggregateType() + '\u0000' + e.aggregateId());
          List<EventEnvelope> run = runs.get(h);
          long last = run.isEmpty() ? batch.get(h).sequence() : run.get(run.size() - 1).sequence();
          if (e.sequence() == last + 1) {
            run.add(e);
            runAttempts.get(h).add(rs.getInt("attempts"));
            room--;
          }
        }
      }
    }
    List<EventEnvelope> ordered = new ArrayList<>(batchSize);
    List<Integer> orderedAttempts = new ArrayList<>(batchSize);
    for (int i = 0; i < heads; i++) {
      ordered.add(batch.get(i));
      orderedAttempts.add(attempts.get(i));
      ordered.addAll(runs.get(i));
      orderedAttempts.addAll(runAttempts.get(i));
    }
    batch.clear();
    batch.addAll(ordered);
    attempts.clear();
    attempts.addAll(orderedAttempts);
  }
}
