package dev.idemkit.outbox;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.jdbc.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The transactional outbox: {@link #append appends} an event in the caller's transaction, so it
 * commits (or rolls back) with the business rows it describes, and gives operators the backlog, the
 * parked events and a way to re-queue them. An {@link OutboxRelay} sends what was appended.
 *
 * <p>Thread-safe; holds no state but its {@link DataSource} (for the operator queries) and clock.
 */
public final class Outbox {

  /**
   * Takes the aggregate's next number and inserts the event with it, in one statement (one round
   * trip in the writer's transaction). The counter upsert takes the counter row's lock until the
   * caller's transaction ends. That lock is the ordering decision: a second transaction appending
   * to the same aggregate waits here until the first commits (then numbers after it) or rolls back
   * (then reuses its number). So within an aggregate, numbers follow commit order and have no gaps,
   * and the relay can send an aggregate's events by number without ever skipping one that commits
   * late. Returns nothing if the event id is already taken (the number is then given back).
   */
  private static final String APPEND =
      """
      with w as (select ?::timestamptz as t, ?::text as tenant),
      next as (
        insert into idemkit_outbox_aggregate as a (aggregate_type, aggregate_id, last_sequence,
                                                   tenant)
        select ?, ?, 1, w.tenant from w
        on conflict (aggregate_type, aggregate_id)
        do update set last_sequence = a.last_sequence + 1,
                      tenant = coalesce(a.tenant, excluded.tenant)
        returning aggregate_type, aggregate_id, last_sequence
      )
      insert into idemkit_outbox (event_id, event_type, tenant, aggregate_type, aggregate_id,
                                  sequence, occurred_at, payload, next_attempt_at)
      select ?, ?, w.tenant, next.aggregate_type, next.aggregate_id, next.last_sequence, w.t, ?,
             w.t
        from next, w
      on conflict (event_id) do nothing
      returning sequence
      """;

  /** The event was already there: give back the number taken (the lock is still ours). */
  private static final String GIVE_BACK_SEQUENCE =
      """
      update idemkit_outbox_aggregate set last_sequence = last_sequence - 1
       where aggregate_type = ? and aggregate_id = ?
      """;

  private static final String FIND_EVENT =
      """
      select event_id, event_type, tenant, aggregate_type, aggregate_id, sequence, occurred_at,
             payload
        from idemkit_outbox
       where event_id = ?
      """;

  private static final String BACKLOG =
      """
      select count(*) filter (where parked_at is null),
             count(*) filter (where parked_at is not null),
             min(occurred_at)
        from idemkit_outbox
       where sent_at is null
      """;

  private static final String PARKED =
      """
      select event_id, event_type, tenant, aggregate_type, aggregate_id, sequence, occurred_at,
             payload, attempts, last_error, parked_at
        from idemkit_outbox
       where parked_at is not null and sent_at is null
       order by parked_at, event_id
       limit ?
      """;

  private static final String REQUEUE =
      """
      update idemkit_outbox
         set parked_at = null, attempts = 0, next_attempt_at = ?, last_error = null
       where event_id = ? and parked_at is not null and sent_at is null
      """;

  /**
   * The default {@link Builder#maxPayloadBytes limit} on a payload: 900 KiB, leaving room for the
   * envelope's headers and key under Kafka's default 1 MiB record size ({@code max.request.size},
   * the broker's {@code message.max.bytes}).
   */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 900 * 1024;

  private final DataSource dataSource;
  private final Clock clock;
  private final int maxPayloadBytes;

  private Outbox(DataSource dataSource, Clock clock, int maxPayloadBytes) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** An outbox on {@code dataSource} (its tables applied with {@link OutboxSchema#migrate}). */
  public static Outbox create(DataSource dataSource) {
    return builder(dataSource).build();
  }

  /** The same with an injected clock (occurred-at, re-queue times). */
  public static Outbox create(DataSource dataSource, Clock clock) {
    return builder(dataSource).clock(clock).build();
  }

  /** An outbox on {@code dataSource} with settings of its own. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** Settings of an {@link Outbox}; each has a default. */
  public static final class Builder {
    private final DataSource dataSource;
    private Clock clock;
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * The clock for occurred-at and re-queue times (default: the database server's, {@link
     * DatabaseClock}).
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The largest payload {@link Outbox#append} accepts, in UTF-8 bytes (default {@value
     * Outbox#DEFAULT_MAX_PAYLOAD_BYTES}). Keep it below what the transport can carry (on Kafka, the
     * producer's {@code max.request.size} and the topic's {@code max.message.bytes}, less room for
     * headers): a larger event would be stored, then fail and be parked by the relay, holding back
     * its aggregate's later events. At least 1.
     */
    public Builder maxPayloadBytes(int maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
      return this;
    }

    /**
     * The outbox.
     *
     * @throws IllegalArgumentException if {@code maxPayloadBytes} is below 1, naming its value
     */
    public Outbox build() {
      Settings.atLeastOne("Outbox", "maxPayloadBytes", maxPayloadBytes);
      return new Outbox(
          dataSource, clock != null ? clock : DatabaseClock.of(dataSource), maxPayloadBytes);
    }
  }

  /** What {@link #append} did. */
  public record Appended(EventEnvelope event, boolean duplicate) {}

  /**
   * Appends {@code event} in the transaction open on {@code transaction} (auto-commit off; the
   * caller commits or rolls back). Appending the same logical event again (same tenant, cause key
   * and type, hence the same {@link NewEvent#eventId() id}) adds no row and answers the event as
   * first appended, with {@code duplicate = true}.
   *
   * <p>Holds the aggregate's counter lock until the transaction ends: keep transactions that append
   * short, and append an aggregate's events from one transaction at a time (they are serialized
   * anyway).
   *
   * @throws IllegalArgumentException if the payload is larger than {@link Builder#maxPayloadBytes};
   *     nothing is stored ({@link NewEvent} checks the rest when built)
   * @throws IllegalStateException if the id is already taken by an event of another aggregate or
   *     type (two different events given the same cause key)
   */
  public Appended append(Connection transaction, NewEvent event) throws SQLException {
    requireSendableSize(event.payload());
    if (transaction.getAutoCommit()) {
      throw new IllegalStateException(
          "Outbox.append needs the caller's transaction (auto-commit is on): the event must commit"
              + " with the rows it describes");
    }
    UUID id = event.eventId();
    Instant now = clock.instant();
    Long sequence = null;
    try (PreparedStatement s = transaction.prepareStatement(APPEND)) {
      // Each value bound once (the aggregate comes back from the counter row, the time serves as
      // occurred-at and first due time, the tenant names the counter row's and the event's), the
      // time as ISO-8601 text: fewer values to encode and
      // parse on every append.
      s.setString(1, now.toString());
      s.setString(2, event.tenant());
      s.setString(3, event.aggregateType());
      s.setString(4, event.aggregateId());
      s.setObject(5, id);
      s.setString(6, event.type());
      s.setString(7, event.payload());
      try (ResultSet rs = s.executeQuery()) {
        if (rs.next()) {
          sequence = rs.getLong(1);
        }
      }
    }
    if (sequence != null) {
      return new Appended(
          new EventEnvelope(
              id,
              event.type(),
              event.tenant(),
              event.aggregateType(),
              event.aggregateId(),
              sequence,
              now,
              event.payload()),
          false);
    }
    try (PreparedStatement s = transaction.prepareStatement(GIVE_BACK_SEQUENCE)) {
      s.setString(1, event.aggregateType());
      s.setString(2, event.aggregateId());
      s.executeUpdate();
    }
    EventEnvelope existing = find(transaction, id);
    if (!existing.aggregateType().equals(event.aggregateType())
        || !existing.aggregateId().equals(event.aggregateId())
        || !existing.type().equals(event.type())) {
      throw new IllegalStateException(
          "Event id "
              + id
              + " already belongs to "
              + existing.type()
              + " of "
              + existing.aggregateType()
              + " "
              + existing.aggregateId()
              + ": give each event a cause key of its own");
    }
    return new Appended(existing, true);
  }

  /**
   * Refuses a payload over the limit. Counts UTF-8 bytes only when the characters alone cannot
   * settle it (at most three bytes per UTF-16 char), so a usual payload costs two comparisons.
   */
  private void requireSendableSize(String payload) {
    int chars = payload.length();
    if ((long) chars * 3 <= maxPayloadBytes) {
      return;
    }
    long bytes = utf8Length(payload);
    if (bytes > maxPayloadBytes) {
      throw new IllegalArgumentException(
          "payload is "
              + bytes
              + " bytes (UTF-8); this outbox accepts at most "
              + maxPayloadBytes
              + " (Outbox.Builder.maxPayloadBytes): store a large document elsewhere and send a"
              + " reference to it");
    }
  }

  private static long utf8Length(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  private static EventEnvelope find(Connection c, UUID id) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(FIND_EVENT)) {
      s.setObject(1, id);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("event " + id + " vanished while appending");
        }
        return envelope(rs);
      }
    }
  }

  static EventEnvelope envelope(ResultSet rs) throws SQLException {
    return new EventEnvelope(
        rs.getObject("event_id", UUID.class),
        rs.getString("event_type"),
        rs.getString("tenant"),
        rs.getString("aggregate_type"),
        rs.getString("aggregate_id"),
        rs.getLong("sequence"),
        rs.getObject("occurred_at", OffsetDateTime.class).toInstant(),
        rs.getString("payload"));
  }

  /**
   * What is waiting: unsent events (not parked), parked events, and how long the oldest unsent
   * event (parked or not) has waited.
   */
  public record Backlog(long unsent, long parked, Duration oldestUnsentAge) {

    /** Nothing waiting. */
    public static final Backlog NONE = new Backlog(0, 0, Duration.ZERO);

    /**
     * This backlog and {@code other}'s together (two databases' outboxes): the counts added up, the
     * oldest unsent event the older of the two.
     */
    public Backlog plus(Backlog other) {
      return new Backlog(
          unsent + other.unsent,
          parked + other.parked,
          oldestUnsentAge.compareTo(other.oldestUnsentAge) >= 0
              ? oldestUnsentAge
              : other.oldestUnsentAge);
    }
  }

  /** The backlog now, in one query. */
  public Backlog backlog() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(BACKLOG);
        ResultSet rs = s.executeQuery()) {
      rs.next();
      OffsetDateTime oldest = rs.getObject(3, OffsetDateTime.class);
      Duration age =
          oldest == null ? Duration.ZERO : Duration.between(oldest.toInstant(), clock.instant());
      return new Backlog(rs.getLong(1), rs.getLong(2), age.isNegative() ? Duration.ZERO : age);
    }
  }

  /** A parked event, for operators. */
  public record ParkedEvent(
      EventEnvelope event, int attempts, String lastError, Instant parkedAt) {}

  /** Up to {@code limit} parked events, oldest first. */
  public List<ParkedEvent> parked(int limit) throws SQLException {
    List<ParkedEvent> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(PARKED)) {
      s.setInt(1, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new ParkedEvent(
                  envelope(rs),
                  rs.getInt("attempts"),
                  rs.getString("last_error"),
                  rs.getObject("parked_at", OffsetDateTime.class).toInstant()));
        }
      }
    }
    return out;
  }

  /**
   * Puts a parked event back in line, due now, with a fresh count of attempts (after the cause was
   * fixed). Answers whether it was parked. Its aggregate's later events follow it.
   */
  public boolean requeue(UUID eventId) throws SQLException {
    try (Connection c = Transactions.autoCommitting(dataSource);
        PreparedStatement s = c.prepareStatement(REQUEUE)) {
      s.setObject(1, utc(clock.instant()));
      s.setObject(2, eventId);
      return s.executeUpdate() == 1;
    }
  }

  /** One batch of a cleanup: deletes up to its size, answers how many it deleted. */
  @FunctionalInterface
  interface Batch {
    int delete() throws SQLException;
  }

  /**
   * Runs {@code batch} until one deletes fewer than {@code size} rows (the backlog is gone);
   * answers how many all of them deleted.
   */
  static int inBatches(int size, Batch batch) throws SQLException {
    int total = 0;
    int deleted;
    do {
      deleted = batch.delete();
      total += deleted;
    } while (deleted == size);
    return total;
  }

  static OffsetDateTime utc(Instant instant) {
    return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
  }
}
