package dev.idemkit.kafka;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.SequenceStart;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import dev.idemkit.support.Backoff;
import dev.idemkit.support.PollingWorker;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A consumer of outbox events on Kafka: adapts the records of a consumer group to an {@link
 * InboxConsumer} (built here, around the application's {@link MessageHandler}, {@link
 * InboxConsumer.Builder#inSequence in sequence}), which applies each message once and each
 * aggregate's in sequence, holding a message that comes ahead of its aggregate (see the inbox).
 * What is left here is Kafka's part:
 *
 * <ul>
 *   <li><b>Offsets are committed only after the inbox committed.</b> Each poll's records go to the
 *       inbox as one batch (one transaction when nothing fails); a consumer killed mid-batch leaves
 *       its partitions' offsets where the last committed batch ended, whoever gets them next reads
 *       the rest again, and the inbox skips what was already applied.
 *   <li><b>Failures</b> (an exception or an {@link Error} from the handler; the polling thread
 *       outlives both): the partition is sent back to the failed message's offset and paused for a
 *       backoff; its later messages are read again then (the inbox skips those it already has). The
 *       inbox counts the attempts and parks the message after the last one, acknowledged, so a
 *       poison message holds up its partition for a few backoffs, never for ever; its aggregate's
 *       later events are then held until an operator fixes the cause and {@link #requeue re-queues}
 *       it. A round that fails anywhere after its poll (the inbox's bookkeeping, a call on the
 *       Kafka client, the commit) sends every partition of its records back to the batch's first
 *       offset there before the next poll: an offset is committed only for records the inbox
 *       answered applied, duplicate, held or parked (and those before them), never past one it
 *       answered FAILED or did not get. A {@link KafkaConsumerListener} that throws is logged and
 *       ignored; it is only told.
 *   <li><b>Held messages</b> are applied once their gap closes: every {@code heldRetryInterval}
 *       this consumer calls {@link InboxConsumer#releaseHeld}; {@link #requeue} does at once.
 *   <li>Records that are not Idemkit events (missing or malformed headers) are skipped and counted.
 *   <li><b>The inbox outlives the topics' retention.</b> A record can be delivered again for as
 *       long as its topic keeps it (the group reads from the earliest offset once its committed
 *       offsets expired or were reset), and one that comes after the inbox forgot its id is applied
 *       twice. So {@link #start} reads the topics' {@code retention.ms} and {@code cleanup.policy}
 *       from the cluster and refuses to start unless the inbox retention exceeds every one; a topic
 *       that keeps records for ever ({@code retention.ms=-1}, {@code compact}) is refused unless
 *       {@link Builder#acceptUnboundedRetention accepted}. See {@link Builder#redeliveryHorizon}
 *       for what happens when the cluster cannot tell.
 * </ul>
 *
 * <p><b>Several databases</b> (tenants on shards): with {@link Builder#routing} each message is
 * applied on its tenant's database, one inbox batch per database and poll, the offsets computed
 * from the merged outcomes as above; a message whose tenant is moving fails and is read again after
 * the backoff.
 *
 * <p>One thread polls (Kafka consumers are single-threaded); run several instances (threads or
 * processes) with the same consumer name to share the partitions.
 */
public final class KafkaEventConsumer implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(KafkaEventConsumer.class.getName());

  private final String name;
  private final InboxConsumer inbox;
  private final RoutedInbox routed;
  private final Properties consumerProperties;
  private final List<String> topics;
  private final Backoff backoff;
  private final Duration heldRetryInterval;
  private final Duration pollTimeout;
  private final Duration inboxRetention;
  private final Duration redeliveryHorizon;
  private final boolean acceptUnboundedRetention;
  private final Duration retentionCheckTimeout;
  private final Clock clock;
  private final KafkaConsumerListener listener;
  private final UnaryOperator<Consumer<String, String>> clientWrapper;

  private final PartitionRetries retries;
  private PollingWorker worker;

  private KafkaEventConsumer(Builder b) {
    this.name = b.name;
    MessageRouting routing = b.routing != null ? b.routing : MessageRouting.single(b.dataSource);
    this.clock =
        b.clock != null ? b.clock : DatabaseClock.of(routing.dataSource(routing.routes().get(0)));
    this.listener = b.kafkaListener;
    this.clientWrapper = b.clientWrapper;
    this.inbox =
        InboxConsumer.builder(b.name, b.dataSource, b.handler)
            .inSequence(b.sequenceStart)
            .maxAttempts(b.maxAttempts)
            .retention(b.inboxRetention)
            .redeliveryHorizon(b.redeliveryHorizon)
            .clock(clock)
            .listener(b.outboxListener)
            .build();
    this.routed = new RoutedInbox(b.name, inbox, routing);
    this.consumerProperties = b.properties;
    this.topics = b.aggregateTypes.stream().map(b.topicNaming::topicFor).distinct().toList();
    this.backoff = Backoff.exponential(b.initialBackoff, b.maxBackoff);
    this.retries = new PartitionRetries(clock, backoff);
    this.heldRetryInterval = b.heldRetryInterval;
    this.pollTimeout = b.pollTimeout;
    this.inboxRetention = b.inboxRetention;
    this.redeliveryHorizon = b.redeliveryHorizon;
    this.acceptUnboundedRetention = b.acceptUnboundedRetention;
    this.retentionCheckTimeout = b.retentionCheckTimeout;
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

  /**
   * Checks the topics' retention on the cluster, then starts the polling thread and tells the
   * {@link KafkaConsumerListener#started listener}. The check asks the cluster for every subscribed
   * topic's {@code retention.ms} and {@code cleanup.policy} (for a topic not created yet, the
   * broker's defaults), waiting up to {@link Builder#retentionCheckTimeout} (default 5 s); what it
   * cannot learn in that time (cluster down, DescribeConfigs not authorized) it takes to be the
   * configured {@link Builder#redeliveryHorizon}, with a warning, and starts.
   *
   * @throws IllegalStateException (and polls nothing) if a topic keeps records for as long as the
   *     inbox retention or longer, or for ever ({@code retention.ms=-1}, a {@code cleanup.policy}
   *     without {@code delete}) and {@link Builder#acceptUnboundedRetention} was not set: the
   *     message names the topic, its setting, the inbox retention and the setting to change; or if
   *     no Kafka client can use {@code bootstrap.servers} (none of its hosts resolves, a malformed
   *     entry), naming the setting, or the consumer's client cannot be created with its settings
   *     (an interceptor or metric reporter that fails, say), with Kafka's reason
   */
  public synchronized KafkaEventConsumer start() {
    if (worker != null) {
      return this;
    }
    // Under this object's lock for up to retentionCheckTimeout: a close() meanwhile waits, then
    // finds nothing running; a refusal leaves the consumer as it was, not started.
    RetentionCheck.verify(
        name,
        inboxRetention,
        redeliveryHorizon,
        acceptUnboundedRetention,
        RetentionCheck.read(name, consumerProperties, topics, retentionCheckTimeout));
    // Created here, not on the polling thread, which a failure here would end before its first
    // poll with nobody told; handed to that thread by its start (a happens-before edge).
    KafkaConsumer<String, String> c = KafkaSettings.newConsumer(name, consumerProperties);
    Consumer<String, String> polled = clientWrapper.apply(c);
    worker =
        PollingWorker.named("idemkit-kafka-consumer-" + name)
            .poll(new Rounds(polled))
            // Kafka's client is stopped by its wakeup(), not by an interrupt (which would fail the
            // commit of the batch in hand); and closed after the last poll, never beside one.
            .interruptOnStop(false)
            .onStop(polled::wakeup)
            .whenStopped(polled::close)
            .stopTimeout(Duration.ofSeconds(30))
            .build()
            .start();
    tell(() -> listener.started(this));
    return this;
  }

  /**
   * Stops polling (the client's poll is woken up); the batch in hand finishes and its offsets are
   * committed, then the client closes. Waits for that, at most 30 seconds.
   */
  @Override
  public synchronized void close() {
    if (worker != null) {
      worker.stop();
      worker = null;
    }
  }

  /**
   * The polling thread's rounds: subscribe (once), send back what a failed round left unsettled,
   * poll, resume partitions whose backoff is over, hand the records to the inbox, and every {@code
   * heldRetryInterval} release held messages. Confined to the polling thread, as the Kafka client
   * must be.
   */
  private final class Rounds implements PollingWorker.Poll {
    private final Consumer<String, String> c;
    private boolean subscribed;
    private Instant nextHeldCheck = clock.instant();

    Rounds(Consumer<String, String> c) {
      this.c = c;
    }

    @Override
    public Duration pollOnce() {
      ConsumerRecords<String, String> unsettled = ConsumerRecords.empty();
      try {
        if (!subscribed) {
          c.subscribe(topics, retries.rebalanceListener());
          subscribed = true;
        }
        retries.rewind(c);
        ConsumerRecords<String, String> records = c.poll(pollTimeout);
        unsettled = records;
        retries.resumeDue(c);
        if (!records.isEmpty()) {
          process(c, records);
        }
        unsettled = ConsumerRecords.empty();
        if (!clock.instant().isBefore(nextHeldCheck)) {
          releaseHeld();
          nextHeldCheck = clock.instant().plus(heldRetryInterval);
        }
        return Duration.ZERO;
      } catch (WakeupException e) {
        // close() asked us to stop; the client closes without committing anything more.
        return Duration.ZERO;
      } catch (Exception | Error e) {
        // An Error too (the client's, a bug's): this thread is the only one polling, and if it
        // ended, nothing would be consumed any more, with nobody told.
        LOG.log(Level.WARNING, name + ": consumer round failed; trying again", e);
        retries.rewindLater(unsettled);
        return backoff.delay(1);
      }
    }
  }

  /**
   * One poll's records: to the inbox as one batch, then the offsets, up to the first record of each
   * partition whose outcome does not allow its offset to be committed. Each record's offset is
   * committed only if its outcome is {@linkplain Received#acknowledged() acknowledged} (or it is no
   * Idemkit event), and so are those before it. If this throws, the caller rewinds the partitions
   * ({@link PartitionRetries#rewindLater}).
   */
  void process(Consumer<String, String> c, ConsumerRecords<String, String> records) {
    List<Item> items = new ArrayList<>(records.count());
    int unreadable = 0;
    for (ConsumerRecord<String, String> r : records) {
      EventEnvelope e;
      try {
        e = KafkaTransport.envelope(r);
      } catch (IllegalArgumentException notOurs) {
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
                + notOurs.getMessage());
        e = null;
      }
      if (e == null) {
        unreadable++;
      } else {
        items.add(new Item(new TopicPartition(r.topic(), r.partition()), r.offset(), e));
      }
    }
    if (unreadable > 0) {
      int count = unreadable;
      tell(() -> listener.unreadable(name, count));
    }

    Map<TopicPartition, Long> failedAt = new HashMap<>();
    if (!items.isEmpty()) {
      List<Received> outcomes = routed.receive(items.stream().map(Item::envelope).toList());
      List<EventEnvelope> applied = new ArrayList<>(items.size());
      for (int k = 0; k < items.size(); k++) {
        Item item = items.get(k);
        Received outcome = outcomes.get(k);
        if (outcome == null || !outcome.acknowledged()) {
          failedAt.merge(item.partition(), item.offset(), Math::min);
        } else if (outcome == Received.APPLIED) {
          applied.add(item.envelope());
        }
      }
      if (!applied.isEmpty()) {
        tell(() -> listener.applied(name, applied));
      }
    }

    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    for (TopicPartition p : records.partitions()) {
      List<ConsumerRecord<String, String>> rs = records.records(p);
      Long failed = failedAt.get(p);
      if (failed == null) {
        retries.settled(p);
        commit.put(p, new OffsetAndMetadata(rs.get(rs.size() - 1).offset() + 1));
      } else {
        // Everything before the failed message is done; read it and what follows again later.
        commit.put(p, new OffsetAndMetadata(failed));
        retries.retryFrom(c, p, failed);
        tell(() -> listener.partitionRetried(name));
      }
    }
    // Only now: every message up to these offsets is in the inbox (applied, skipped, held or
    // parked), and those transactions committed.
    c.commitSync(commit);
  }

  /**
   * Tells the {@link KafkaConsumerListener}, which must not throw; one that does anyway is logged
   * and ignored: it is only told (meters), and must neither stop the batch nor decide its offsets.
   */
  private void tell(Runnable call) {
    try {
      call.run();
    } catch (Exception | Error e) {
      LOG.log(Level.WARNING, name + ": the KafkaConsumerListener threw; ignored", e);
    }
  }

  /**
   * Applies held messages whose gap has closed ({@link InboxConsumer#releaseHeld}), on every route;
   * a route that fails does not stop the others (the first failure is thrown after them all).
   *
   * @return how many were applied
   */
  public int releaseHeld() throws SQLException {
    List<EventEnvelope> applied = routed.releaseHeld();
    if (!applied.isEmpty()) {
      tell(() -> listener.applied(name, applied));
    }
    return applied.size();
  }

  /**
   * Up to {@code limit} held messages of every route, longest held first ({@link
   * InboxConsumer#held}).
   */
  public List<InboxConsumer.HeldMessage> held(int limit) throws SQLException {
    return routed.held(limit);
  }

  /**
   * The held messages' count and oldest time, every route together ({@link
   * InboxConsumer#heldSummary}).
   */
  public InboxConsumer.HeldSummary heldSummary() throws SQLException {
    return routed.heldSummary();
  }

  /**
   * Re-queues a parked message after its cause was fixed and applies it now, then what it held back
   * (see {@link InboxConsumer#requeue}), on the route where it is parked. Re-queue an aggregate's
   * parked messages in sequence order.
   *
   * @return the outcome, or {@code null} if no route has the message parked
   */
  public Received requeue(UUID messageId) throws SQLException {
    return routed.requeue(messageId);
  }

  private record Item(TopicPartition partition, long offset, EventEnvelope envelope) {}

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
    private boolean acceptUnboundedRetention;
    private Duration retentionCheckTimeout = Duration.ofSeconds(5);
    private Duration initialBackoff = Duration.ofMillis(200);
    private Duration maxBackoff = Duration.ofSeconds(10);
    private Duration heldRetryInterval = Duration.ofSeconds(1);
    private Duration pollTimeout = Duration.ofMillis(200);
    private Clock clock;
    private MessageRouting routing;
    private OutboxListener outboxListener = OutboxListener.NONE;
    private KafkaConsumerListener kafkaListener = KafkaConsumerListener.NONE;
    private UnaryOperator<Consumer<String, String>> clientWrapper = UnaryOperator.identity();

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

    /** The consumer's name (its consumer group and its inbox name), for per-consumer settings. */
    public String name() {
      return name;
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

    /**
     * What is expected first of an aggregate with no record (default {@code FROM_ONE}, which goes
     * on from what the inbox already processed of the aggregate, for events still in this
     * database's outbox). {@code FIRST_SEEN} for a consumer whose earlier events the inbox cannot
     * place (applied on the embedded transport before the outbox's retention, another database's):
     * their aggregates' next events would otherwise be held for ever (see {@link SequenceStart}).
     */
    public Builder sequenceStart(SequenceStart sequenceStart) {
      this.sequenceStart = Objects.requireNonNull(sequenceStart);
      return this;
    }

    /** A message is parked in the inbox after failing this many times (default 5). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * How long the inbox remembers applied ids (default 14 days). Must exceed every subscribed
     * topic's retention on the cluster ({@link #start} refuses otherwise) and the configured {@link
     * #redeliveryHorizon} ({@link #build} refuses otherwise).
     */
    public Builder inboxRetention(Duration retention) {
      this.inboxRetention = Objects.requireNonNull(retention);
      return this;
    }

    /**
     * The redelivery horizon assumed for a topic whose retention the cluster cannot tell at {@link
     * KafkaEventConsumer#start start} (not reachable within {@link #retentionCheckTimeout},
     * DescribeConfigs not authorized, or a topic not created yet whose broker's defaults cannot be
     * read), logged as a warning; default 7 days, Kafka's default {@code retention.ms}. Set it to
     * the topics' retention. The inbox's retention must exceed it ({@link #build} refuses
     * otherwise). When the cluster answers, its topics' retention decides, longer or shorter.
     */
    public Builder redeliveryHorizon(Duration redeliveryHorizon) {
      this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
      return this;
    }

    /**
     * Starts even if a subscribed topic keeps records for ever ({@code retention.ms=-1}, or a
     * {@code cleanup.policy} without {@code delete}, such as {@code compact}), which {@link
     * KafkaEventConsumer#start} otherwise refuses (default {@code false}): such a record may be
     * delivered again after the inbox forgot it and be applied twice. Accept it only where that
     * cannot happen, e.g. the group's committed offsets are never lost ({@code
     * offsets.retention.minutes} after the group was last empty) nor reset to the earliest. Topics
     * with a finite retention are still checked.
     */
    public Builder acceptUnboundedRetention(boolean accept) {
      this.acceptUnboundedRetention = accept;
      return this;
    }

    /**
     * How long {@link KafkaEventConsumer#start} waits for the cluster to tell the topics' retention
     * (default 5 s) before it assumes the configured {@link #redeliveryHorizon} and starts.
     */
    public Builder retentionCheckTimeout(Duration timeout) {
      if (Objects.requireNonNull(timeout).isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("retentionCheckTimeout must be positive: " + timeout);
      }
      this.retentionCheckTimeout = timeout;
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

    /**
     * Any other consumer setting ({@code session.timeout.ms}, security, …), checked at once against
     * Kafka's definition of it. What the guarantees rest on cannot be changed: auto-commit stays
     * off (offsets follow the inbox), the group is the consumer's name (one group per consumer),
     * and a group with no committed offset starts at the earliest record (else a new consumer would
     * skip the events already on the topic).
     *
     * @throws IllegalArgumentException for a value Kafka would refuse, or one of those settings
     */
    public Builder property(String name, Object value) {
      KafkaSettings.checkConsumerGuarantees(this.name, name, value);
      KafkaSettings.check(ConsumerConfig.configDef(), "consumer", name, value);
      properties.put(name, value);
      return this;
    }

    /**
     * The clock for due times, marks and cut-offs (default: the database server's, {@link
     * DatabaseClock}, so that instances whose clocks disagree agree on when a row is due).
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    /**
     * Applies each message on its route's database (tenants on shards; see {@link MessageRouting}):
     * each poll's records are split by route, and each route's go to the inbox as one batch with
     * that route bound; held messages are released on every route. The {@code dataSource} given to
     * {@link KafkaEventConsumer#builder} must answer the bound route's database. The default clock
     * is then the first route's database's. Default: every message on {@code dataSource}.
     */
    public Builder routing(MessageRouting routing) {
      this.routing = Objects.requireNonNull(routing);
      if (routing.routes().isEmpty()) {
        throw new IllegalArgumentException(
            "Kafka consumer "
                + name
                + ": routing has no route (this instance serves no database); a consumer here"
                + " would fail every message of the partitions it were given");
      }
      return this;
    }

    /** Told what the inbox does (applied, duplicates, failures, parked, held, released, stale). */
    public Builder listener(OutboxListener listener) {
      this.outboxListener = Objects.requireNonNull(listener);
      return this;
    }

    /** Told about applied batches, unreadable records and partition retries. */
    public Builder kafkaListener(KafkaConsumerListener listener) {
      this.kafkaListener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * Tests only: wraps the Kafka client the polling thread uses (to make one of its calls fail).
     */
    Builder clientWrapper(UnaryOperator<Consumer<String, String>> wrapper) {
      this.clientWrapper = Objects.requireNonNull(wrapper);
      return this;
    }

    /**
     * The consumer (not started).
     *
     * @throws IllegalStateException if no aggregate type was named, or the inbox's retention does
     *     not exceed the configured redelivery horizon (the topics' retention on the cluster is
     *     checked by {@link KafkaEventConsumer#start})
     * @throws IllegalArgumentException if an aggregate type's topic is not a valid Kafka topic
     *     name, or the consumer settings together are not valid (what the polling thread would
     *     otherwise die of after start-up)
     */
    public KafkaEventConsumer build() {
      if (aggregateTypes.isEmpty()) {
        throw new IllegalStateException(
            "Kafka consumer " + name + ": name the aggregate types it reads (aggregateTypes)");
      }
      for (String type : aggregateTypes) {
        TopicNames.validateFor(name, type, topicNaming.topicFor(type));
      }
      Properties all = new Properties();
      all.putAll(properties);
      all.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      all.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      // What KafkaConsumer checks when the polling thread starts.
      KafkaSettings.checkAll(
          all, ConsumerConfig::new, "Kafka consumer " + name + ": invalid consumer setting");
      return new KafkaEventConsumer(this);
    }
  }
}
