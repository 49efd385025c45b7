package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.MessageReceiver;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;

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
 * <p>The inbox remembers processed ids for its {@code retention}, which must exceed the transport's
 * redelivery horizon: {@link Builder#build()} refuses otherwise.
 */
public final class InboxConsumer implements MessageReceiver {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

  /**
   * Claims messages for this transaction, in one statement: new rows, or rows left {@code FAILED}
   * by an earlier attempt. Returns the ids claimed; a {@code PROCESSED} or {@code PARKED} row is
   * not. A row another transaction inserted or claimed and has not committed yet makes this one
   * wait, then decide on the committed outcome.
   */
  private static final String CLAIM =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      processed_at)
      select ?, u.id, 'PROCESSED', 0, ?, ? from unnest(?::uuid[]) as u(id)
      on conflict (consumer_name, message_id) do update
         set status = 'PROCESSED', processed_at = excluded.processed_at, last_error = null,
             event_type = null, tenant = null, aggregate_type = null, aggregate_id = null,
             sequence = null, occurred_at = null, payload = null
       where i.status = 'FAILED'
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
   * envelope; parks the message at the last allowed attempt. Does nothing to a row a racing
   * delivery has meanwhile {@code PROCESSED} (or parked).
   */
  private static final String RECORD_FAILURE =
      """
      insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at,
                                      last_error, event_type, tenant, aggregate_type,
                                      aggregate_id, sequence, occurred_at, payload)
      values (?, ?, case when 1 >= ? then 'PARKED' else 'FAILED' end, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      on conflict (consumer_name, message_id) do update
         set attempts = i.attempts + 1,
             status = case when i.attempts + 1 >= ? then 'PARKED' else 'FAILED' end,
             last_error = excluded.last_error,
             event_type = excluded.event_type, tenant = excluded.tenant,
             aggregate_type = excluded.aggregate_type, aggregate_id = excluded.aggregate_id,
             sequence = excluded.sequence, occurred_at = excluded.occurred_at,
             payload = excluded.payload
       where i.status = 'FAILED'
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

  /** One more try for a parked message: a failure parks it again at once. */
  private static final String UNPARK =
      """
      update idemkit_inbox
         set status = 'FAILED', attempts = ? - 1
       where consumer_name = ? and message_id = ? and status = 'PARKED'
      returning message_id as event_id, event_type, tenant, aggregate_type, aggregate_id,
                sequence, occurred_at, payload
      """;

  private static final String DELETE_PROCESSED =
      """
      delete from idemkit_inbox
       where consumer_name = ? and status = 'PROCESSED' and processed_at < ?
      """;

  private final String name;
  private final DataSource dataSource;
  private final MessageHandler handler;
  private final int maxAttempts;
  private final Duration retention;
  private final Clock clock;
  private final OutboxListener listener;

  private InboxConsumer(Builder b) {
    this.name = b.name;
    this.dataSource = b.dataSource;
    this.handler = b.handler;
    this.maxAttempts = b.maxAttempts;
    this.retention = b.retention;
    this.clock = b.clock;
    this.listener = b.listener;
  }

  /**
   * A consumer named {@code name} (unique among the consumers sharing these tables) applying
   * messages with {@code handler} on {@code dataSource}.
   */
  public static Builder builder(String name, DataSource dataSource, MessageHandler handler) {
    return new Builder(name, dataSource, handler);
  }

  @Override
  public String consumerName() {
    return name;
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
    try {
      Received[] r = inOneTransaction(batch);
      for (int k = 0; k < r.length; k++) {
        out[indices.get(k)] = r[k];
      }
      return;
    } catch (MessageFailedException e) {
      int at = indexOf(batch, e.failedMessage());
      if (at >= 0) {
        LOG.log(Level.FINE, name + ": " + e.getMessage() + "; the batch goes on without it");
        // The ones before it again as a batch, it on its own, then the rest (but its aggregate's
        // later messages, if it failed: they wait for it).
        process(all, indices.subList(0, at), out);
        out[indices.get(at)] = receiveOne(batch.get(at));
        Set<AggregateKey> failed = failedAggregates(all, indices.subList(0, at + 1), out);
        List<Integer> rest = new ArrayList<>();
        for (int i : indices.subList(at + 1, indices.size())) {
          if (failed.contains(AggregateKey.of(all.get(i)))) {
            out[i] = Received.FAILED;
          } else {
            rest.add(i);
          }
        }
        process(all, rest, out);
        return;
      }
      LOG.log(Level.FINE, name + ": a batch of " + batch.size() + " failed; one by one now", e);
    } catch (Exception e) {
      LOG.log(Level.FINE, name + ": a batch of " + batch.size() + " failed; one by one now", e);
    }
    Set<AggregateKey> failed = new HashSet<>();
    for (int i : indices) {
      AggregateKey aggregate = AggregateKey.of(all.get(i));
      out[i] = failed.contains(aggregate) ? Received.FAILED : receiveOne(all.get(i));
      if (out[i] == Received.FAILED) {
        failed.add(aggregate);
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

  private static Set<AggregateKey> failedAggregates(
      List<EventEnvelope> all, List<Integer> indices, Received[] out) {
    Set<AggregateKey> failed = new HashSet<>();
    for (int i : indices) {
      if (out[i] == Received.FAILED) {
        failed.add(AggregateKey.of(all.get(i)));
      }
    }
    return failed;
  }

  private Received receiveOne(EventEnvelope message) {
    try {
      return inOneTransaction(List.of(message))[0];
    } catch (Exception e) {
      listener.consumeFailed(name);
      Throwable cause =
          e instanceof MessageFailedException && e.getCause() != null ? e.getCause() : e;
      return recordFailure(message, cause);
    }
  }

  private Received[] inOneTransaction(List<EventEnvelope> messages) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        Received[] out = new Received[messages.size()];
        OffsetDateTime now = Outbox.utc(clock.instant());
        List<EventEnvelope> toApply = claimAll(c, messages, now, out);
        if (!toApply.isEmpty()) {
          handler.applyAll(c, toApply);
        }
        c.commit();
        report(out);
        return out;
      } catch (Throwable t) {
        c.rollback();
        throw t;
      } finally {
        c.setAutoCommit(autoCommit);
      }
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
      default -> Received.DUPLICATE;
    };
  }

  private void report(Received[] outcomes) {
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
    if (duplicates > 0) {
      listener.duplicatesSkipped(name, duplicates);
    }
  }

  private Received recordFailure(EventEnvelope m, Throwable cause) {
    String error =
        cause.getClass().getSimpleName()
            + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    LOG.log(Level.WARNING, name + " failed on " + m.type() + " " + m.eventId() + ": " + error);
    LOG.log(Level.FINE, "The failure in full", cause);
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(RECORD_FAILURE)) {
      s.setString(1, name);
      s.setObject(2, m.eventId());
      s.setInt(3, maxAttempts);
      s.setObject(4, Outbox.utc(clock.instant()));
      s.setString(5, error.length() > 1000 ? error.substring(0, 1000) : error);
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
          try (PreparedStatement st = c.prepareStatement(STATUS)) {
            st.setString(1, name);
            st.setObject(2, m.eventId());
            try (ResultSet r2 = st.executeQuery()) {
              r2.next();
              return settled(m.eventId(), r2.getString(1));
            }
          }
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

  /** An aggregate. */
  private record AggregateKey(String type, String id) {
    static AggregateKey of(EventEnvelope m) {
      return new AggregateKey(m.aggregateType(), m.aggregateId());
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
   * the inbox kept: the transport acknowledged it when it was parked and will not bring it again. A
   * failure parks it again at once.
   *
   * @return the outcome, or {@code null} if no such message was parked
   */
  public Received requeue(UUID messageId) throws SQLException {
    EventEnvelope m;
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(UNPARK)) {
      s.setInt(1, maxAttempts);
      s.setString(2, name);
      s.setObject(3, messageId);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        m = Outbox.envelope(rs);
      }
    }
    return receiveOne(m);
  }

  /** Forgets messages processed longer ago than the retention; answers how many. */
  public int deleteProcessed() throws SQLException {
    Instant cutoff = clock.instant().minus(retention);
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(DELETE_PROCESSED)) {
      s.setString(1, name);
      s.setObject(2, Outbox.utc(cutoff));
      return s.executeUpdate();
    }
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

    private Builder(String name, DataSource dataSource, MessageHandler handler) {
      this.name = Objects.requireNonNull(name, "name");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** A message is parked after failing this many times (default 5). */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1");
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** How long processed message ids are remembered (default 14 days). */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention);
      return this;
    }

    /**
     * The transport's {@link dev.idemkit.outbox.spi.EventTransport#redeliveryHorizon() redelivery
     * horizon}: required, and the retention must exceed it.
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
     * The consumer.
     *
     * @throws IllegalStateException if no redelivery horizon was given, or the retention does not
     *     exceed it: a redelivery after the inbox forgot the message would apply it twice
     */
    public InboxConsumer build() {
      if (redeliveryHorizon == null) {
        throw new IllegalStateException(
            "Inbox consumer "
                + name
                + ": set redeliveryHorizon(transport.redeliveryHorizon()) so the inbox can check"
                + " that it remembers messages for longer than the transport may redeliver them");
      }
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
