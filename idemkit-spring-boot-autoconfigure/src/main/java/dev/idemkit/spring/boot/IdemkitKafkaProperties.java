package dev.idemkit.spring.boot;

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
   * How long a message may be delivered again after its first delivery: the topics' retention.
   * Every inbox's retention must exceed it.
   */
  private Duration redeliveryHorizon = Duration.ofDays(7);

  /**
   * How long a consumer's inbox remembers the ids it applied, after which the inbox cleanup
   * (idemkit.inbox.cleanup.*) deletes them. Must exceed the redelivery horizon: a consumer refuses
   * to start otherwise.
   */
  private Duration inboxRetention = Duration.ofDays(14);

  /** A consumer's message is parked in its inbox after this many failed attempts. */
  private int maxAttempts = 5;

  /** Extra producer settings ({@code linger.ms}, security, …); idempotence and acks=all stay. */
  private Map<String, String> producer = new LinkedHashMap<>();

  /** Extra consumer settings ({@code session.timeout.ms}, security, …); auto-commit stays off. */
  private Map<String, String> consumer = new LinkedHashMap<>();

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
}
