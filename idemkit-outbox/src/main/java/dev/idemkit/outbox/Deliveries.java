package dev.idemkit.outbox;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.jdbc.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Side effects outside the database (an e-mail, a webhook), recorded before they happen.
 *
 * <p>The transaction that decides the effect (a consumer's, with its inbox row) {@link #record
 * records} it under a unique key; a {@link DeliverySender} then delivers it, passing that key to
 * the receiving system as its idempotency key, and marks it delivered. A crash between delivering
 * and marking delivers again with the same key, and the receiver, deduplicating on it, keeps one:
 * nothing is lost (the intent committed) and nothing doubles at the receiving end.
 *
 * <p>A delivered row is kept for the sender's {@link DeliverySender.Builder#deliveredRetention
 * delivered retention} (then {@link DeliverySender#deleteDelivered deleted}); while it is kept,
 * recording its key again changes nothing. Pending and parked rows are kept until delivered.
 */
public final class Deliveries {

  private static final String RECORD =
      """
      insert into idemkit_delivery (delivery_key, channel, payload, status, created_at,
                                    next_attempt_at)
      values (?, ?, ?, 'PENDING', ?, ?)
      on conflict (delivery_key) do nothing
      """;

  private static final String FIND =
      """
      select delivery_key, channel, status, attempts, last_error
        from idemkit_delivery
       where delivery_key = ?
      """;

  private static final String PARKED =
      """
      select delivery_key, channel, status, attempts, last_error
        from idemkit_delivery
       where status = 'PARKED'
       order by created_at, delivery_key
       limit ?
      """;

  private static final String PARKED_COUNT =
      """
      select count(*) from idemkit_delivery where status = 'PARKED'
      """;

  private static final String REQUEUE =
      """
      update idemkit_delivery
         set status = 'PENDING', attempts = 0, next_attempt_at = ?, last_error = null
       where delivery_key = ? and status = 'PARKED'
      """;

  private final DataSource dataSource;
  private final Clock clock;

  private Deliveries(DataSource dataSource, Clock clock) {
    this.dataSource = Objects.requireNonNull(dataSource);
    this.clock = Objects.requireNonNull(clock);
  }

  public static Deliveries create(DataSource dataSource) {
    return new Deliveries(dataSource, DatabaseClock.of(dataSource));
  }

  public static Deliveries create(DataSource dataSource, Clock clock) {
    return new Deliveries(dataSource, clock);
  }

  /**
   * Records, in the caller's transaction, that {@code payload} is to be delivered on {@code
   * channel} under {@code key}. Answers whether it is new (false: that key was recorded before, and
   * this call changed nothing).
   */
  public boolean record(Connection transaction, String key, String channel, String payload)
      throws SQLException {
    try (PreparedStatement s = transaction.prepareStatement(RECORD)) {
      var now = Outbox.utc(clock.instant());
      s.setString(1, key);
      s.setString(2, channel);
      s.setString(3, payload);
      s.setObject(4, now);
      s.setObject(5, now);
      return s.executeUpdate() == 1;
    }
  }

  /** A recorded delivery's state. */
  public record Delivery(
      String key, String channel, String status, int attempts, String lastError) {}

  /** The delivery recorded under {@code key}, if any. */
  public Optional<Delivery> find(String key) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(FIND)) {
      s.setString(1, key);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? Optional.of(delivery(rs)) : Optional.empty();
      }
    }
  }

  /** Up to {@code limit} parked deliveries, oldest first. */
  public List<Delivery> parked(int limit) throws SQLException {
    List<Delivery> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(PARKED)) {
      s.setInt(1, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(delivery(rs));
        }
      }
    }
    return out;
  }

  /**
   * How many deliveries are parked, on every channel: all of them, however many (a count of {@link
   * #parked} stops at its limit). Reads the parked rows' own index, never the delivered ones (kept
   * for the delivered retention).
   */
  public long parkedCount() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(PARKED_COUNT);
        ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Puts a parked delivery back in line, due now; answers whether it was parked. */
  public boolean requeue(String key) throws SQLException {
    try (Connection c = Transactions.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(REQUEUE)) {
      s.setObject(1, Outbox.utc(clock.instant()));
      s.setString(2, key);
      return s.executeUpdate() == 1;
    }
  }

  private static Delivery delivery(ResultSet rs) throws SQLException {
    return new Delivery(
        rs.getString("delivery_key"),
        rs.getString("channel"),
        rs.getString("status"),
        rs.getInt("attempts"),
        rs.getString("last_error"));
  }
}
