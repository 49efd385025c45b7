package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.outbox.spi.TransportUnavailableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The outbox relay's transport to Kafka: one record per event, on the topic of its aggregate type
 * ({@link TopicNaming}), keyed by the aggregate id (so an aggregate's events share a partition and
 * keep their order), the JSON payload as value, and the envelope as headers (event id, type,
 * tenant, aggregate type and id, aggregate sequence, occurred-at: {@link EventEnvelope#headers()}).
 *
 * <p>The producer is idempotent with {@code acks=all}: an event's stage completes only from the
 * send's callback, once every in-sync replica has it; the relay marks it sent only then. A failed
 * or timed-out send completes the stage exceptionally and the event stays unsent (the relay tries
 * again with backoff). When the producer has no connection to any broker, or the event's partition
 * cannot take writes now (its leader gone, too few in-sync replicas; a partial outage), the failure
 * is the cluster's, not the event's: the stage fails with a {@link TransportUnavailableException}
 * ("no connection to any Kafka broker …", "partition not writable …"), which the relay retries
 * without counting toward parking the event; a topic the cluster does not know (auto-creation off)
 * fails that topic's events only, and counts, as does a record the cluster refuses (too large, not
 * authorized). A send that timed out may still have reached the broker: the retry then writes it a
 * second time with the same event id, which consumers' inboxes skip. Kafka's idempotence only
 * removes duplicates within one producer session; the inbox removes the rest.
 *
 * <p>When the cluster is down {@link #send} blocks for about one {@code max.block.ms} (default 5 s)
 * per batch, so the round fails quickly instead of holding the relay's row locks: the producer
 * waits up to that long for a topic's metadata, and Kafka 4 reports the timeout through the send's
 * callback (within {@code send()}, without throwing); once one event of a batch failed that way
 * with no broker reachable (or the producer is closed), the batch's later events fail at once with
 * the same error. So do they after a record found no room in the producer's buffer ({@code
 * buffer.memory}) within {@code max.block.ms} ({@code BufferExhaustedException}): the cluster takes
 * records slower than the relay sends them (slow, throttled, partly down), the cluster's failure
 * too ("producer buffer full …"), not the event's. (If the cluster answers but does not know a
 * topic, each such topic of the batch waits once, and its later events fail at once.) A record that
 * was queued (its topic's metadata was known) while the broker is down fails after {@code
 * delivery.timeout.ms} (default 20 s), within the relay's acknowledgement timeout.
 */
public final class KafkaTransport implements EventTransport {

  private final Producer<String, String> producer;
  private final TopicNaming topics;
  private final Duration redeliveryHorizon;
  private final String bootstrapServers;

  KafkaTransport(Producer<String, String> producer, Builder b) {
    this.producer = producer;
    this.bootstrapServers =
        String.valueOf(b.properties.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG));
    this.topics = b.topics;
    this.redeliveryHorizon = b.redeliveryHorizon;
  }

  /** A transport to the cluster at {@code bootstrapServers} ({@code host:port,…}). */
  public static Builder builder(String bootstrapServers) {
    return new Builder(bootstrapServers);
  }

  @Override
  public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
    List<CompletionStage<Void>> acks = new ArrayList<>(events.size());
    Thread caller = Thread.currentThread();
    RuntimeException unavailable = null;
    Map<String, Exception> topicUnknown = new HashMap<>();
    for (EventEnvelope e : events) {
      CompletableFuture<Void> ack = new CompletableFuture<>();
      acks.add(ack);
      String topic = topics.topicFor(e.aggregateType());
      if (unavailable != null) {
        // The cluster did not answer within max.block.ms for an earlier event of this batch:
        // fail the rest at once rather than wait that long for each.
        ack.completeExceptionally(unavailable);
        continue;
      }
      if (topicUnknown.containsKey(topic)) {
        ack.completeExceptionally(topicUnknown.get(topic)); // same topic, same wait in vain
        continue;
      }
      Exception[] failedInSend = new Exception[1];
      try {
        producer.send(
            record(topic, e),
            (metadata, error) -> {
              if (Thread.currentThread() == caller) {
                // A failure before the record was queued (Kafka 4: metadata not available within
                // max.block.ms), reported inside send(), which then returns normally: handled
                // below, on this thread.
                failedInSend[0] = error;
              } else if (error == null) {
                ack.complete(null); // the producer's I/O thread: the broker acknowledged
              } else {
                ack.completeExceptionally(classify(error)); // or the producer gave up
              }
            });
      } catch (RuntimeException error) {
        // Producer closed, record too large or not serializable (older clients also threw the
        // metadata timeout here).
        failedInSend[0] = error;
      }
      Exception error = failedInSend[0];
      if (error == null) {
        continue;
      }
      if (error instanceof IllegalStateException) {
        unavailable = new TransportUnavailableException("Kafka producer closed", error);
        ack.completeExceptionally(unavailable);
      } else if (error instanceof BufferExhaustedException) {
        // No room in buffer.memory for max.block.ms: the cluster takes records slower than they
        // come (slow, throttled, partly down), whatever the event. Checked before the
        // TimeoutException it extends, which would count against the event while brokers answer;
        // the batch's later events would wait as long in vain.
        unavailable =
            new TransportUnavailableException(
                "producer buffer full (buffer.memory), the cluster takes records slower than they"
                    + " are sent: "
                    + error.getMessage(),
                error);
        ack.completeExceptionally(unavailable);
      } else if (error instanceof org.apache.kafka.common.errors.TimeoutException) {
        if (clusterUnreachable()) {
          unavailable = unreachable(error);
          ack.completeExceptionally(unavailable);
        } else {
          // The cluster answers but does not know the topic (not created, auto-creation off):
          // this topic's events fail, and count; the batch's other topics are still sent.
          topicUnknown.put(topic, error);
          ack.completeExceptionally(error);
        }
      } else {
        ack.completeExceptionally(error);
      }
    }
    return acks;
  }

  /**
   * A failure the producer reported once it gave up on a queued record: the cluster's, not the
   * event's ({@link TransportUnavailableException}: retried without counting toward parking), when
   * it is retriable: no broker reachable at all, or the record's partition not writable now (its
   * leader gone or unreachable, fewer in-sync replicas than {@code min.insync.replicas}, the
   * delivery timeout), which the same record can pass once the cluster is whole. A topic the
   * cluster no longer knows and a record that arrived corrupt are the event's failures and count,
   * as every non-retriable error does (too large, not authorized, invalid).
   */
  private Exception classify(Exception error) {
    if (!(error instanceof RetriableException)
        || error instanceof UnknownTopicOrPartitionException
        || error instanceof CorruptRecordException) {
      return error;
    }
    if (clusterUnreachable()) {
      return unreachable(error);
    }
    return new TransportUnavailableException(
        "partition not writable (" + error.getClass().getSimpleName() + "): " + error.getMessage(),
        error);
  }

  private TransportUnavailableException unreachable(Exception error) {
    return new TransportUnavailableException(
        "no connection to any Kafka broker (" + bootstrapServers + "): " + error.getMessage(),
        error);
  }

  /** Whether the producer has no open connection to any broker (its {@code connection-count}). */
  private boolean clusterUnreachable() {
    for (Map.Entry<MetricName, ? extends Metric> m : producer.metrics().entrySet()) {
      if (m.getKey().name().equals("connection-count")
          && m.getKey().group().equals("producer-metrics")) {
        return m.getValue().metricValue() instanceof Number n && n.doubleValue() == 0;
      }
    }
    return false;
  }

  /** The record an event travels as: key = aggregate id, value = payload, envelope as headers. */
  public static ProducerRecord<String, String> record(String topic, EventEnvelope e) {
    ProducerRecord<String, String> record =
        new ProducerRecord<>(topic, e.partitionKey(), e.payload());
    for (Map.Entry<String, String> h : e.headers().entrySet()) {
      record.headers().add(h.getKey(), h.getValue().getBytes(StandardCharsets.UTF_8));
    }
    return record;
  }

  /**
   * The event a record carries (the inverse of {@link #record}): its envelope from the headers, its
   * payload from the value.
   *
   * @throws IllegalArgumentException if the record is not an Idemkit event (headers missing or
   *     malformed)
   */
  static EventEnvelope envelope(ConsumerRecord<String, String> r) {
    Map<String, String> headers = new HashMap<>();
    for (Header h : r.headers()) {
      if (h.value() != null) {
        headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
      }
    }
    return EventEnvelope.fromHeaders(headers, r.value() == null ? "" : r.value());
  }

  @Override
  public Duration redeliveryHorizon() {
    return redeliveryHorizon;
  }

  /** Flushes what is in flight and closes the producer. */
  @Override
  public void close() {
    producer.close(Duration.ofSeconds(10));
  }

  /** Configures a transport. */
  public static final class Builder {
    private final Properties properties = new Properties();
    private TopicNaming topics = TopicNaming.prefixed("idemkit.events.");
    private Duration redeliveryHorizon = Duration.ofDays(7);

    private Builder(String bootstrapServers) {
      properties.put(
          ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          Objects.requireNonNull(bootstrapServers, "bootstrapServers"));
      properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      properties.put(ProducerConfig.ACKS_CONFIG, "all");
      properties.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
      properties.put(ProducerConfig.LINGER_MS_CONFIG, "5");
      properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
      properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
      properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
      properties.put(ProducerConfig.CLIENT_ID_CONFIG, "idemkit-relay");
    }

    /** Where each aggregate type's events go (default: {@code idemkit.events.<aggregateType>}). */
    public Builder topics(TopicNaming topics) {
      this.topics = Objects.requireNonNull(topics);
      return this;
    }

    /**
     * What {@link #redeliveryHorizon()} answers: how long a consumer may still receive an event
     * again after its first delivery, the topics' retention as configured here (default 7 days,
     * Kafka's default {@code retention.ms}). {@link KafkaEventConsumer} does not rely on it: it
     * reads its topics' retention from the cluster when it starts (see {@link
     * KafkaEventConsumer#start}).
     */
    public Builder redeliveryHorizon(Duration redeliveryHorizon) {
      this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
      return this;
    }

    /**
     * Any other producer setting ({@code linger.ms}, {@code compression.type}, security, …). The
     * settings the guarantees rest on cannot be weakened: idempotence stays on and acks stay {@code
     * all}, the producer stays non-transactional ({@code transactional.id} is refused: the
     * transport sends outside any Kafka transaction, which a transactional producer refuses to do),
     * and records are partitioned by their key, the aggregate id ({@code
     * partitioner.ignore.keys=true} is refused: an aggregate's events would no longer share a
     * partition, nor keep their order).
     *
     * <p>Each setting Kafka defines is checked at once against Kafka's definition of it (type,
     * allowed values), as {@link KafkaEventConsumer.Builder#property} checks consumer settings.
     *
     * @throws IllegalArgumentException for one of those settings, or a value Kafka would refuse (an
     *     unknown {@code compression.type}, a {@code linger.ms} that is no number, …), naming the
     *     setting and the value
     */
    public Builder property(String name, Object value) {
      if (name.equals(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
        throw new IllegalArgumentException(
            "transactional.id="
                + value
                + " refused: the transport's producer is idempotent and not transactional (it sends"
                + " each event outside any Kafka transaction, which a transactional producer"
                + " refuses to do, so no event would be sent); remove the setting");
      }
      if (name.equals(ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG)
          && "true".equalsIgnoreCase(String.valueOf(value).trim())) {
        throw new IllegalArgumentException(
            "partitioner.ignore.keys="
                + value
                + " refused: records are keyed by aggregate id so that an aggregate's events share"
                + " a partition and are consumed in order; ignoring the keys would spread them over"
                + " partitions and let consumers apply them out of order (or hold them)");
      }
      if (name.equals(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG)
              && !"true".equals(String.valueOf(value))
          || name.equals(ProducerConfig.ACKS_CONFIG)
              && !"all".equals(String.valueOf(value))
              && !"-1".equals(String.valueOf(value))) {
        throw new IllegalArgumentException(
            name + "=" + value + " would let an acknowledged event be lost or reordered; refused");
      }
      KafkaSettings.check(ProducerConfig.configDef(), "producer", name, value);
      properties.put(name, value);
      return this;
    }

    /** The producer settings as they stand (a copy). */
    public Properties producerProperties() {
      Properties copy = new Properties();
      copy.putAll(properties);
      return copy;
    }

    /**
     * The transport, its producer created.
     *
     * @throws IllegalArgumentException if the producer settings together are not valid (what
     *     Kafka's producer would refuse with a {@code KafkaException})
     */
    public KafkaTransport build() {
      Properties all = producerProperties();
      all.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      all.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      // What KafkaProducer checks when it is created.
      KafkaSettings.checkAll(all, ProducerConfig::new, "invalid producer setting");
      return new KafkaTransport(
          new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer()), this);
    }
  }
}
