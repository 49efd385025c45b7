package dev.idemkit.spring.boot;

import dev.idemkit.outbox.SequenceStart;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code idemkit.events.kafka.*}: the Kafka transport for the outbox and the inbox consumers. Set
 * {@code bootstrap-servers} to use it; without it the embedded transport stays.
 */
@ConfigurationProperties(prefix = "idemkit.events.kafka")
public class IdemkitKafkaProperties {

  /** The cluster, {@code host:port[,host:port…]}. Setting it switches the transport to Kafka. */
  private String bootstrapServers;

  /** Topic of an aggregate type's events: this prefix and the aggregate type. */
  private String topicPrefix = "idemkit.events.";

  /** Explicit topic names per aggregate type, overriding the prefix. */
  private Map<String, String> topics = new LinkedHashMap<>();

  /**
   * How long a message may be delivered again after its first delivery: the topics' retention, as
   * far as the application knows it. The transport answers it as its redelivery horizon, and a
   * consumer assumes it for a topic whose retention the cluster cannot tell when the consumer
   * starts (not reachable within retention-check-timeout, DescribeConfigs not authorized), with a
   * warning; when the cluster answers, its topics' retention.ms decides. Every inbox's retention
   * must exceed it.
   */
  private Duration redeliveryHorizon = Duration.ofDays(7);

  /**
   * How long a consumer's inbox remembers the ids it applied, after which the inbox cleanup
   * (idemkit.inbox.cleanup.*) deletes them. Must exceed the retention.ms of every topic the
   * consumer reads, as the cluster tells it at start, and the redelivery horizon: a consumer
   * refuses to start otherwise.
   */
  private Duration inboxRetention = Duration.ofDays(14);

  /**
   * Lets consumers start on topics that keep records for ever (retention.ms=-1, or a cleanup.policy
   * without delete, such as compact), which they otherwise refuse: such a record may be delivered
   * again after the inbox forgot it and be applied twice. Set it only if that cannot happen, e.g.
   * the groups' committed offsets are never lost nor reset to the earliest.
   */
  private boolean acceptUnboundedRetention;

  /**
   * How long a consumer's start waits for the cluster to tell its topics' retention before it
   * assumes the redelivery horizon and starts.
   */
  private Duration retentionCheckTimeout = Duration.ofSeconds(5);

  /** A consumer's message is parked in its inbox after this many failed attempts. */
  private int maxAttempts = 5;

  /**
   * Extra producer settings ({@code linger.ms}, security, …); idempotence and acks=all stay, a
   * {@code transactional.id} is refused (the producer is idempotent, not transactional), and so is
   * {@code partitioner.ignore.keys=true} (records are partitioned by aggregate).
   */
  private Map<String, String> producer = new LinkedHashMap<>();

  /** Extra consumer settings ({@code session.timeout.ms}, security, …); auto-commit stays off. */
  private Map<String, String> consumer = new LinkedHashMap<>();

  /** Per consumer name: {@code idemkit.events.kafka.consumers.<name>.first-sequence}. */
  private Map<String, ConsumerSettings> consumers = new LinkedHashMap<>();

  public String getBootstrapServers() {
    return bootstrapServers;
  }

  public void setBootstrapServers(String bootstrapServers) {
    this.bootstrapServers = bootstrapServers;
  }

  public String getTopicPrefix() {
    return topicPrefix;
  }

  public void setTopicPrefix(String topicPrefix) {
    this.topicPrefix = topicPrefix;
  }

  public Map<String, String> getTopics() {
    return topics;
  }

  public void setTopics(Map<String, String> topics) {
    this.topics = topics;
  }

  public Duration getRedeliveryHorizon() {
    return redeliveryHorizon;
  }

  public void setRedeliveryHorizon(Duration redeliveryHorizon) {
    this.redeliveryHorizon = redeliveryHorizon;
  }

  public Duration getInboxRetention() {
    return inboxRetention;
  }

  public void setInboxRetention(Duration inboxRetention) {
    this.inboxRetention = inboxRetention;
  }

  public boolean isAcceptUnboundedRetention() {
    return acceptUnboundedRetention;
  }

  public void setAcceptUnboundedRetention(boolean acceptUnboundedRetention) {
    this.acceptUnboundedRetention = acceptUnboundedRetention;
  }

  public Duration getRetentionCheckTimeout() {
    return retentionCheckTimeout;
  }

  public void setRetentionCheckTimeout(Duration retentionCheckTimeout) {
    this.retentionCheckTimeout = retentionCheckTimeout;
  }

  public int getMaxAttempts() {
    return maxAttempts;
  }

  public void setMaxAttempts(int maxAttempts) {
    this.maxAttempts = maxAttempts;
  }

  public Map<String, String> getProducer() {
    return producer;
  }

  public void setProducer(Map<String, String> producer) {
    this.producer = producer;
  }

  public Map<String, String> getConsumer() {
    return consumer;
  }

  public void setConsumer(Map<String, String> consumer) {
    this.consumer = consumer;
  }

  public Map<String, ConsumerSettings> getConsumers() {
    return consumers;
  }

  public void setConsumers(Map<String, ConsumerSettings> consumers) {
    this.consumers = consumers;
  }

  /** The settings of the consumer named {@code name} (defaults if none were given). */
  ConsumerSettings consumer(String name) {
    return consumers.getOrDefault(name, new ConsumerSettings());
  }

  /** {@code idemkit.events.kafka.consumers.<name>.*}: one consumer's own settings. */
  public static class ConsumerSettings {

    /**
     * What the consumer expects first of an aggregate it has no sequence record of: {@code
     * from-one} (sequence 1; later ones are held until it came) or {@code first-seen} (whatever
     * comes first). A {@code from-one} consumer that ran on the embedded transport before goes on
     * from what its inbox processed there, for events still in this database's outbox (see
     * docs/events.md). Use {@code first-seen} for a consumer that joins a stream whose beginning it
     * will never read from Kafka and its inbox cannot place: events applied on the embedded
     * transport longer ago than the outbox keeps sent events, another service's events, or topics
     * whose early events are past retention ({@code from-one} would hold their aggregates' next
     * events for ever). With the relay's aggregate window above 1, a {@code first-seen} consumer
     * may apply a new aggregate's second event before its first, which it then skips as stale: keep
     * the window at 1 while such a consumer meets new aggregates, or switch it back to {@code
     * from-one} once it has caught up.
     */
    private SequenceStart firstSequence = SequenceStart.FROM_ONE;

    public SequenceStart getFirstSequence() {
      return firstSequence;
    }

    public void setFirstSequence(SequenceStart firstSequence) {
      this.firstSequence = firstSequence;
    }
  }
}
