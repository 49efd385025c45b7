package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A consumer of outbox events on Kafka, applying each once and each aggregate's in sequence.
 *
 * <p>It reads as the consumer group named after the consumer, and hands messages to an {@link
 * InboxConsumer} (built here, around the application's {@link MessageHandler}), which applies each
 * in one database transaction with its inbox row. Then:
 *
 * <ul>
 *   <li><b>Offsets are committed only after the inbox committed.</b> A consumer killed mid-batch
 *       leaves its partitions' offsets where the last committed batch ended; whoever gets them next
 *       reads the rest again, and the inbox skips what was already applied.
 *   <li><b>Duplicates</b> (the same event id again: a relay that died between the broker's
 *       acknowledgement and its mark, a re-read after a rebalance) are acknowledged and skipped.
 *   <li><b>Per-aggregate order.</b> The consumer knows each aggregate's last applied sequence. A
 *       message behind it is skipped; the next one is applied; one ahead of it (a gap: an earlier
 *       event is parked, or missing) is <em>held</em> in {@code idemkit_kafka_held}, counted
 *       ({@link KafkaConsumerListener#gapHeld}) and listed for operators ({@link #held}), and
 *       applied only once the gap closes. Messages of one aggregate go to the inbox one at a time
 *       (in waves: the first pending message of every aggregate, then the next, …), so a failure
 *       never lets a later event of its aggregate through.
 *   <li><b>Failures</b>: the partition is sent back to the failed message's offset and paused for a
 *       backoff; its later messages are read again then. The inbox counts the attempts and parks
 *       the message after the last one, acknowledged, so a poison message holds up its partition
 *       for a few backoffs, never for ever; its aggregate's later events are then held until an
 *       operator fixes the cause and {@link #requeue re-queues} it.
 * </ul>
 *
 * <p>One thread polls (Kafka consumers are single-threaded); run several instances (threads or
 * processes) with the same consumer name to share the partitions.
 */
public final class KafkaEventConsumer implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(KafkaEventConsumer.class.getName());

  private static final String LAST_SEQUENCES =
      """
      select aggregate_type, aggregate_id, last_sequence
        from idemkit_kafka_sequence
       where consumer_name = ?
         and (aggregate_type, aggregate_id) in (select * from unnest(?::text[], ?::text[]))
      """;

  private static final String HOLD =
      """
      insert into idemkit_kafka_held (consumer_name, message_id, event_type, tenant,
                                      aggregate_type, aggregate_id, sequence, occurred_at, payload,
                                      topic, kafka_partition, kafka_offset, held_at)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      on conflict (consumer_name, message_id) do nothing
      """;

  /**
   * Held messages whose gap has closed (the aggregate's last applied sequence reached the one
   * before them), or that fell behind it: at most one per aggregate, its lowest.
   */
  private static final String RELEASABLE =
      """
      select distinct on (h.aggregate_type, h.aggregate_id)
             h.message_id, h.event_type, h.tenant, h.aggregate_type, h.aggregate_id, h.sequence,
             h.occurred_at, h.payload
        from idemkit_kafka_held h
        join idemkit_kafka_sequence s
          on s.consumer_name = h.consumer_name
         and s.aggregate_type = h.aggregate_type
         and s.aggregate_id = h.aggregate_id
       where h.consumer_name = ?
         and h.sequence <= s.last_sequence + 1
       order by h.aggregate_type, h.aggregate_id, h.sequence
       limit ?
      """;

  private static final String RELEASE =
      """
      delete from idemkit_kafka_held where consumer_name = ? and message_id = ?
      """;

  private static final String HELD =
      """
      select h.message_id, h.event_type, h.tenant, h.aggregate_type, h.aggregate_id, h.sequence,
             h.occurred_at, h.payload, h.held_at, coalesce(s.last_sequence, 0) as last_applied
        from idemkit_kafka_held h
        left join idemkit_kafka_sequence s
          on s.consumer_name = h.consumer_name
         and s.aggregate_type = h.aggregate_type
         and s.aggregate_id = h.aggregate_id
       where h.consumer_name = ?
       order by h.held_at, h.aggregate_type, h.aggregate_id, h.sequence
       limit ?
      """;

  private static final String HELD_COUNT =
      """
      select count(*), min(held_at) from idemkit_kafka_held where consumer_name = ?
      """;

  private final String name;
  private final DataSource dataSource;
  private final InboxConsumer inbox;
  private final Properties consumerProperties;
  private final List<String> topics;
  private final SequenceStart sequenceStart;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final Duration heldRetryInterval;
  private final Duration pollTimeout;
  private final Clock clock;
  private final KafkaConsumerListener listener;

  private final Map<TopicPartition, Integer> failuresInARow = new ConcurrentHashMap<>();
  private final Map<TopicPartition, Instant> pausedUntil = new ConcurrentHashMap<>();
  private final AtomicLong staleSkipped = new AtomicLong();
  private volatile boolean running;
  private Thread thread;
  private volatile Consumer<String, String> consumer;

  private KafkaEventConsumer(Builder b) {
    this.name = b.name;
    this.dataSource = b.dataSource;
    this.sequenceStart = b.sequenceStart;
    this.clock = b.clock;
    this.listener = b.kafkaListener;
    this.inbox =
        InboxConsumer.builder(
                b.name,
                b.dataSource,
                new InOrderHandler(
                    b.name,
                    b.handler,
                    b.sequenceStart,
                    b.clock,
                    () -> {
                      staleSkipped.incrementAndGet();
                      b.kafkaListener.staleSkipped(b.name);
                    }))
            .maxAttempts(b.maxAttempts)
            .retention(b.inboxRetention)
            .redeliveryHorizon(b.redeliveryHorizon)
            .clock(b.clock)
            .listener(b.outboxListener)
            .build();
    this.consumerProperties = b.properties;
    this.topics = b.aggregateTypes.stream().map(b.topicNaming::topicFor).distinct().toList();
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.heldRetryInterval = b.heldRetryInterval;
    this.pollTimeout = b.pollTimeout;
  }

  /**
   * A consumer named {@code name} (its consumer group and its inbox name) reading the cluster at
   * {@code bootstrapServers} and applying messages with {@code handler} on {@code dataSource}.
   */
  public static Builder builder(
      String bootstrapServers, String name, DataSource dataSource, MessageHandler handler) {
    return new Builder(bootstrapServers, name, dataSource, handler);
  }

  /** The consumer's name (and consumer group). */
  public String name() {
    return name;
  }

  /** The inbox: parked messages ({@link InboxConsumer#parked}) and the like, for operators. */
  public InboxConsumer inbox() {
    return inbox;
  }

  /** Starts the polling thread. */
  public synchronized KafkaEventConsumer start() {
    if (running) {
      return this;
    }
    running = true;
    thread = new Thread(this::run, "idemkit-kafka-consumer-" + name);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  /** Stops polling; the batch in hand finishes and its offsets are committed. */
  @Override
  public synchronized void close() {
    running = false;
    Consumer<String, String> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    if (thread != null) {
      try {
        thread.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      thread = null;
    }
  }

  private void run() {
    try (KafkaConsumer<String, String> c =
        new KafkaConsumer<>(
            consumerProperties, new StringDeserializer(), new StringDeserializer())) {
      consumer = c;
      c.subscribe(topics, new Rebalance());
      Instant nextHeldCheck = clock.instant();
      while (running) {
        try {
          ConsumerRecords<String, String> records = c.poll(pollTimeout);
          resumeDue(c);
          if (!records.isEmpty()) {
            process(c, records);
          }
          if (!clock.instant().isBefore(nextHeldCheck)) {
            releaseHeld();
            nextHeldCheck = clock.instant().plus(heldRetryInterval);
          }
        } catch (WakeupException e) {
          // close() asked us to stop.
        } catch (Exception e) {
          LOG.log(Level.WARNING, name + ": consumer round failed; trying again", e);
          sleepQuietly(initialBackoff);
        }
      }
    } finally {
      consumer = null;
    }
  }

  /** One poll's records: gate, apply in waves, hold gaps, then commit the offsets. */
  void process(Consumer<String, String> c, ConsumerRecords<String, String> records)
      throws SQLException {
    List<Item> items = new ArrayList<>(records.count());
    int unreadable = 0;
    for (ConsumerRecord<String, String> r : records) {
      EventEnvelope e = decode(r);
      if (e == null) {
        unreadable++;
      } else {
        items.add(new Item(new TopicPartition(r.topic(), r.partition()), r.offset(), e));
      }
    }
    if (unreadable > 0) {
      listener.unreadable(name, unreadable);
    }

    Map<TopicPartition, Long> failedAt = new HashMap<>();
    List<Item> toHold = new ArrayList<>();
    applyInWaves(items, failedAt, toHold);
    toHold.removeIf(i -> failedAt.containsKey(i.partition) && i.offset > failedAt.get(i.partition));
    if (!toHold.isEmpty()) {
      hold(toHold);
      listener.gapHeld(name, toHold.size());
    }

    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    for (TopicPartition p : records.partitions()) {
      List<ConsumerRecord<String, String>> rs = records.records(p);
      Long failed = failedAt.get(p);
      if (failed == null) {
        failuresInARow.remove(p);
        commit.put(p, new OffsetAndMetadata(rs.get(rs.size() - 1).offset() + 1));
      } else {
        // Everything before the failed message is done; read it and what follows again later.
        commit.put(p, new OffsetAndMetadata(failed));
        c.seek(p, failed);
        int failures = failuresInARow.merge(p, 1, Integer::sum);
        pausedUntil.put(p, clock.instant().plus(backoff(failures)));
        c.pause(List.of(p));
        listener.partitionRetried(name);
      }
    }
    // Only now: every message up to these offsets is in the inbox (applied, skipped or parked)
    // or held, and those transactions committed.
    c.commitSync(commit);
  }

  /**
   * Hands {@code items} to the inbox, at most one message per aggregate per call, in each
   * aggregate's order; collects gaps into {@code toHold} and each partition's first failed offset
   * into {@code failedAt}.
   */
  private void applyInWaves(List<Item> items, Map<TopicPartition, Long> failedAt, List<Item> toHold)
      throws SQLException {
    Map<AggregateKey, ArrayDeque<Item>> byAggregate = new LinkedHashMap<>();
    for (Item i : items) {
      byAggregate.computeIfAbsent(i.aggregate(), k -> new ArrayDeque<>()).add(i);
    }
    Map<AggregateKey, Long> next = nextSequences(byAggregate.keySet());
    while (true) {
      List<Item> wave = new ArrayList<>();
      for (Map.Entry<AggregateKey, ArrayDeque<Item>> entry : byAggregate.entrySet()) {
        ArrayDeque<Item> queue = entry.getValue();
        while (!queue.isEmpty()) {
          Item head = queue.peek();
          Long failed = failedAt.get(head.partition);
          if (failed != null && head.offset > failed) {
            queue.clear(); // read again after the partition's backoff
            break;
          }
          Long expected = next.get(entry.getKey());
          long seq = head.envelope.sequence();
          if (expected != null && seq > expected) {
            toHold.add(queue.poll()); // a gap: never applied out of order
            continue;
          }
          if (expected == null || seq == expected) {
            next.put(entry.getKey(), seq + 1); // assuming it applies; see PARKED below
          }
          wave.add(queue.poll()); // the next one, or one behind (the inbox skips it)
          break;
        }
      }
      if (wave.isEmpty()) {
        return;
      }
      List<Received> outcomes;
      try {
        outcomes = inbox.receive(wave.stream().map(Item::envelope).toList());
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, name + ": the inbox failed on a batch of " + wave.size(), e);
        outcomes = wave.stream().map(i -> Received.FAILED).toList();
      }
      List<EventEnvelope> applied = new ArrayList<>(wave.size());
      for (int k = 0; k < wave.size(); k++) {
        if (outcomes.get(k) == Received.APPLIED) {
          applied.add(wave.get(k).envelope());
        }
      }
      if (!applied.isEmpty()) {
        listener.applied(name, applied);
      }
      for (int k = 0; k < wave.size(); k++) {
        Item item = wave.get(k);
        if (outcomes.get(k) == Received.FAILED) {
          failedAt.merge(item.partition, item.offset, Math::min);
          byAggregate.get(item.aggregate()).clear();
        } else if (outcomes.get(k) == Received.PARKED
            && next.get(item.aggregate()) == item.envelope.sequence() + 1) {
          // Parked, not applied: the aggregate still waits for this sequence, and its later
          // events are gaps until an operator re-queues it.
          next.put(item.aggregate(), item.envelope.sequence());
        }
      }
    }
  }

  /** Each aggregate's next expected sequence; absent when unknown and any first one is accepted. */
  private Map<AggregateKey, Long> nextSequences(Collection<AggregateKey> aggregates)
      throws SQLException {
    Map<AggregateKey, Long> next = new HashMap<>();
    String[] types = new String[aggregates.size()];
    String[] ids = new String[aggregates.size()];
    int n = 0;
    for (AggregateKey k : aggregates) {
      types[n] = k.type();
      ids[n++] = k.id();
      if (sequenceStart == SequenceStart.FROM_ONE) {
        next.put(k, 1L);
      }
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(LAST_SEQUENCES)) {
      s.setString(1, name);
      s.setArray(2, c.createArrayOf("text", types));
      s.setArray(3, c.createArrayOf("text", ids));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          next.put(new AggregateKey(rs.getString(1), rs.getString(2)), rs.getLong(3) + 1);
        }
      }
    }
    return next;
  }

  private void hold(List<Item> items) throws SQLException {
    OffsetDateTime now = OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC);
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(HOLD)) {
      for (Item i : items) {
        EventEnvelope e = i.envelope;
        s.setString(1, name);
        s.setObject(2, e.eventId());
        s.setString(3, e.type());
        s.setString(4, e.tenant());
        s.setString(5, e.aggregateType());
        s.setString(6, e.aggregateId());
        s.setLong(7, e.sequence());
        s.setObject(8, OffsetDateTime.ofInstant(e.occurredAt(), ZoneOffset.UTC));
        s.setString(9, e.payload());
        s.setString(10, i.partition.topic());
        s.setInt(11, i.partition.partition());
        s.setLong(12, i.offset);
        s.setObject(13, now);
        s.addBatch();
      }
      s.executeBatch();
    }
  }

  /**
   * Applies held messages whose gap has closed, lowest sequence first, until none is left or one
   * fails (it stays held and is tried again at the next check; the inbox counts its attempts).
   *
   * @return how many were released
   */
  public int releaseHeld() throws SQLException {
    int released = 0;
    while (true) {
      List<EventEnvelope> batch = new ArrayList<>();
      try (Connection c = dataSource.getConnection();
          PreparedStatement s = c.prepareStatement(RELEASABLE)) {
        s.setString(1, name);
        s.setInt(2, 200);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            batch.add(envelope(rs));
          }
        }
      }
      if (batch.isEmpty()) {
        break;
      }
      List<Received> outcomes = inbox.receive(batch);
      int settled = 0;
      try (Connection c = dataSource.getConnection();
          PreparedStatement s = c.prepareStatement(RELEASE)) {
        for (int k = 0; k < batch.size(); k++) {
          if (outcomes.get(k).acknowledged()) {
            s.setString(1, name);
            s.setObject(2, batch.get(k).eventId());
            s.addBatch();
            settled++;
          }
        }
        if (settled > 0) {
          s.executeBatch();
        }
      }
      released += settled;
      if (settled < batch.size()) {
        break;
      }
    }
    if (released > 0) {
      listener.heldReleased(name, released);
    }
    return released;
  }

  /** A message held behind a gap in its aggregate's sequence, for operators. */
  public record HeldMessage(EventEnvelope message, long lastApplied, Instant heldAt) {}

  /** Up to {@code limit} held messages, longest held first. */
  public List<HeldMessage> held(int limit) throws SQLException {
    List<HeldMessage> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(HELD)) {
      s.setString(1, name);
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(
              new HeldMessage(
                  envelope(rs),
                  rs.getLong("last_applied"),
                  rs.getObject("held_at", OffsetDateTime.class).toInstant()));
        }
      }
    }
    return out;
  }

  /** How many messages are held, and since when the oldest (null if none). */
  public record HeldSummary(long count, Instant oldestHeldAt) {}

  /** The held messages' count and oldest time, for meters and operators. */
  public HeldSummary heldSummary() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(HELD_COUNT)) {
      s.setString(1, name);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        OffsetDateTime oldest = rs.getObject(2, OffsetDateTime.class);
        return new HeldSummary(rs.getLong(1), oldest == null ? null : oldest.toInstant());
      }
    }
  }

  /** Messages skipped because their aggregate had already applied a later sequence. */
  public long staleSkipped() {
    return staleSkipped.get();
  }

  /**
   * Re-queues a parked message after its cause was fixed and applies it now (see {@link
   * InboxConsumer#requeue}); then releases what it held back. Re-queue an aggregate's parked
   * messages in sequence order.
   */
  public Received requeue(UUID messageId) throws SQLException {
    Received r = inbox.requeue(messageId);
    releaseHeld();
    return r;
  }

  private EventEnvelope decode(ConsumerRecord<String, String> r) {
    Map<String, String> headers = new HashMap<>();
    for (Header h : r.headers()) {
      if (h.value() != null) {
        headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
      }
    }
    try {
      return EventEnvelope.fromHeaders(headers, r.value() == null ? "" : r.value());
    } catch (IllegalArgumentException e) {
      LOG.log(
          Level.WARNING,
          name
              + ": skipping "
              + r.topic()
              + "-"
              + r.partition()
              + "@"
              + r.offset()
              + ", not an Idemkit event: "
              + e.getMessage());
      return null;
    }
  }

  private static EventEnvelope envelope(ResultSet rs) throws SQLException {
    return new EventEnvelope(
        rs.getObject("message_id", UUID.class),
        rs.getString("event_type"),
        rs.getString("tenant"),
        rs.getString("aggregate_type"),
        rs.getString("aggregate_id"),
        rs.getLong("sequence"),
        rs.getObject("occurred_at", OffsetDateTime.class).toInstant(),
        rs.getString("payload"));
  }

  private void resumeDue(Consumer<String, String> c) {
    if (pausedUntil.isEmpty()) {
      return;
    }
    Instant now = clock.instant();
    Set<TopicPartition> due = new LinkedHashSet<>();
    pausedUntil.forEach(
        (p, until) -> {
          if (!now.isBefore(until)) {
            due.add(p);
          }
        });
    if (!due.isEmpty()) {
      due.retainAll(c.assignment());
      c.resume(due);
      pausedUntil.keySet().removeAll(due);
      pausedUntil.keySet().retainAll(c.assignment());
    }
  }

  Duration backoff(int failures) {
    Duration d = initialBackoff;
    for (int i = 1; i < failures && d.compareTo(maxBackoff) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
  }

  private static void sleepQuietly(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Offsets are committed after every batch, so a revoked partition has nothing pending; what is
   * forgotten is its pause and backoff (the next owner starts afresh from the committed offset).
   */
  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      partitions.forEach(
          p -> {
            pausedUntil.remove(p);
            failuresInARow.remove(p);
          });
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
  }

  private record AggregateKey(String type, String id) {}

  private record Item(TopicPartition partition, long offset, EventEnvelope envelope) {
    AggregateKey aggregate() {
      return new AggregateKey(envelope.aggregateType(), envelope.aggregateId());
    }
  }

  /** Configures a consumer; everything but what {@link #builder} takes has a default. */
  public static final class Builder {
    private final String name;
    private final DataSource dataSource;
    private final MessageHandler handler;
    private final Properties properties = new Properties();
    private final Set<String> aggregateTypes = new LinkedHashSet<>();
    private TopicNaming topicNaming = TopicNaming.prefixed("idemkit.events.");
    private SequenceStart sequenceStart = SequenceStart.FROM_ONE;
    private int maxAttempts = 5;
    private Duration inboxRetention = Duration.ofDays(14);
    private Duration redeliveryHorizon = Duration.ofDays(7);
    private Duration initialBackoff = Duration.ofMillis(200);
    private Duration maxBackoff = Duration.ofSeconds(10);
    private Duration heldRetryInterval = Duration.ofSeconds(1);
    private Duration pollTimeout = Duration.ofMillis(200);
    private Clock clock = Clock.systemUTC();
    private OutboxListener outboxListener = OutboxListener.NONE;
    private KafkaConsumerListener kafkaListener = KafkaConsumerListener.NONE;

    private Builder(
        String bootstrapServers, String name, DataSource dataSource, MessageHandler handler) {
      this.name = Objects.requireNonNull(name, "name");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.handler = Objects.requireNonNull(handler, "handler");
      properties.put(
          ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
          Objects.requireNonNull(bootstrapServers, "bootstrapServers"));
      properties.put(ConsumerConfig.GROUP_ID_CONFIG, name);
      properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
      properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "idemkit-" + name);
    }

    /** Reads the events of these aggregate types (their topics, by the {@link #topics} naming). */
    public Builder aggregateTypes(String... types) {
      aggregateTypes.addAll(List.of(types));
      return this;
    }

    /** The relay's topic naming (default: {@code idemkit.events.<aggregateType>}). */
    public Builder topics(TopicNaming topicNaming) {
      this.topicNaming = Objects.requireNonNull(topicNaming);
      return this;
    }

    /** What is expected first of an aggregate with no record (default {@code FROM_ONE}). */
    public Builder sequenceStart(SequenceStart sequenceStart) {
      this.sequenceStart = Objects.requireNonNull(sequenceStart);
      return this;
    }

    /** A message is parked in the inbox after failing this many times (default 5). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** How long the inbox remembers applied ids (default 14 days). */
    public Builder inboxRetention(Duration retention) {
      this.inboxRetention = Objects.requireNonNull(retention);
      return this;
    }

    /**
     * The topics' retention: how long after a first delivery a message may come again (default 7
     * days, {@link KafkaTransport}'s). The inbox's retention must exceed it.
     */
    public Builder redeliveryHorizon(Duration redeliveryHorizon) {
      this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
      return this;
    }

    /** After a failure the partition waits this long, doubling up to {@code max}. */
    public Builder retryBackoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial);
      this.maxBackoff = Objects.requireNonNull(max);
      return this;
    }

    /** How often held messages are checked for a closed gap (default 1 s). */
    public Builder heldRetryInterval(Duration interval) {
      this.heldRetryInterval = Objects.requireNonNull(interval);
      return this;
    }

    /** How long one poll waits for records (default 200 ms). */
    public Builder pollTimeout(Duration pollTimeout) {
      this.pollTimeout = Objects.requireNonNull(pollTimeout);
      return this;
    }

    /** Any other consumer setting; auto-commit stays off (offsets follow the inbox). */
    public Builder property(String name, Object value) {
      if (name.equals(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG)
          && !"false".equals(String.valueOf(value))) {
        throw new IllegalArgumentException(
            "enable.auto.commit would commit offsets before the inbox committed; refused");
      }
      properties.put(name, value);
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    /** Told what the inbox does (applied, duplicates, failures, parked). */
    public Builder listener(OutboxListener listener) {
      this.outboxListener = Objects.requireNonNull(listener);
      return this;
    }

    /** Told about gaps, stale messages, unreadable records and partition retries. */
    public Builder kafkaListener(KafkaConsumerListener listener) {
      this.kafkaListener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * The consumer (not started).
     *
     * @throws IllegalStateException if no aggregate type was named, or the inbox's retention does
     *     not exceed the redelivery horizon
     */
    public KafkaEventConsumer build() {
      if (aggregateTypes.isEmpty()) {
        throw new IllegalStateException(
            "Kafka consumer " + name + ": name the aggregate types it reads (aggregateTypes)");
      }
      return new KafkaEventConsumer(this);
    }
  }
}
