package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Wraps a consumer's handler so that, inside the inbox's transaction, an aggregate's events are
 * applied in sequence: the message with the next sequence advances the aggregate's counter and
 * runs; one behind it (already applied under another delivery) is skipped; one ahead of it is a gap
 * and fails ({@link SequenceGapException}), which the consumer avoids by holding such messages
 * before they get here.
 *
 * <p>Two deliveries of one aggregate racing (a rebalanced partition read by a zombie and by its new
 * owner): the conditional {@code UPDATE} takes the counter row's lock, so the second waits for the
 * first's transaction, then re-checks its condition against the committed counter and finds itself
 * behind.
 */
final class InOrderHandler implements MessageHandler {

  private static final String ADVANCE =
      """
      update idemkit_kafka_sequence
         set last_sequence = ?, applied_at = ?
       where consumer_name = ? and aggregate_type = ? and aggregate_id = ?
         and last_sequence = ? - 1
      """;

  private static final String FIRST =
      """
      insert into idemkit_kafka_sequence (consumer_name, aggregate_type, aggregate_id,
                                          last_sequence, applied_at)
      values (?, ?, ?, ?, ?)
      on conflict (consumer_name, aggregate_type, aggregate_id) do nothing
      """;

  static final String LAST =
      """
      select last_sequence from idemkit_kafka_sequence
       where consumer_name = ? and aggregate_type = ? and aggregate_id = ?
      """;

  private final String consumer;
  private final MessageHandler delegate;
  private final SequenceStart start;
  private final Clock clock;
  private final Runnable staleSkipped;

  InOrderHandler(
      String consumer,
      MessageHandler delegate,
      SequenceStart start,
      Clock clock,
      Runnable staleSkipped) {
    this.consumer = consumer;
    this.delegate = delegate;
    this.start = start;
    this.clock = clock;
    this.staleSkipped = staleSkipped;
  }

  @Override
  public void apply(Connection transaction, EventEnvelope message) throws Exception {
    if (advance(transaction, message)) {
      delegate.apply(transaction, message);
    } else {
      staleSkipped.run();
    }
  }

  /** Whether {@code m} is its aggregate's next event (now recorded as applied); false if behind. */
  private boolean advance(Connection c, EventEnvelope m) throws SQLException {
    OffsetDateTime now = OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC);
    try (PreparedStatement s = c.prepareStatement(ADVANCE)) {
      s.setLong(1, m.sequence());
      s.setObject(2, now);
      s.setString(3, consumer);
      s.setString(4, m.aggregateType());
      s.setString(5, m.aggregateId());
      s.setLong(6, m.sequence());
      if (s.executeUpdate() == 1) {
        return true;
      }
    }
    Long last = last(c, consumer, m);
    if (last == null && (m.sequence() == 1 || start == SequenceStart.FIRST_SEEN)) {
      try (PreparedStatement s = c.prepareStatement(FIRST)) {
        s.setString(1, consumer);
        s.setString(2, m.aggregateType());
        s.setString(3, m.aggregateId());
        s.setLong(4, m.sequence());
        s.setObject(5, now);
        if (s.executeUpdate() == 1) {
          return true;
        }
      }
      // A racing delivery inserted it first; decide against what it committed.
      last = last(c, consumer, m);
    }
    if (last != null && m.sequence() <= last) {
      return false;
    }
    throw new SequenceGapException(m, last == null ? 0 : last);
  }

  static Long last(Connection c, String consumer, EventEnvelope m) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(LAST)) {
      s.setString(1, consumer);
      s.setString(2, m.aggregateType());
      s.setString(3, m.aggregateId());
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }
}
