package dev.idemkit.spring.boot;

import dev.idemkit.kafka.KafkaConsumerListener;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaSchema;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.kafka.MessageRouting;
import dev.idemkit.kafka.TopicNames;
import dev.idemkit.kafka.TopicNaming;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.spi.EventTransport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;

/**
 * The Kafka side of the outbox and inbox, when {@code idemkit.events.kafka.bootstrap-servers} is
 * set and {@code idemkit-kafka} is on the class path: an {@link EventTransport} bean (a {@link
 * KafkaTransport}) for the application's relay, the Kafka consumer's tables, and {@link
 * KafkaConsumers}, which starts a consumer group each time the application calls {@link
 * KafkaConsumers#start} and closes them at shutdown; a consumer whose topics keep records as long
 * as its inbox retention or longer refuses to start ({@link KafkaEventConsumer#start}), and so does
 * the application. It builds no {@code Outbox}, no {@code OutboxRelay} and starts no consumer: the
 * application wires those (docs/events.md, "In a Spring Boot service"). With tenants on shards
 * ({@code idemkit.shards.*}) each consumer is one group for every shard, applying each message on
 * its tenant's shard ({@link KafkaEventConsumer.Builder#routing}), and the tables are made on every
 * shard (docs/scaling.md). Without the property nothing here applies and no transport is created.
 * An application's own {@link EventTransport} bean wins over the Kafka one.
 */
@AutoConfiguration(
    after = DataSourceAutoConfiguration.class,
    afterName = "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration")
@ConditionalOnClass({KafkaTransport.class, EventTransport.class})
@ConditionalOnProperty(prefix = "idemkit.events.kafka", name = "bootstrap-servers")
@EnableConfigurationProperties(IdemkitKafkaProperties.class)
public class IdemkitKafkaAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(EventTransport.class)
  public KafkaTransport idemkitKafkaTransport(IdemkitKafkaProperties properties) {
    KafkaTransport.Builder b =
        KafkaTransport.builder(properties.getBootstrapServers())
            .topics(topics(properties))
            .redeliveryHorizon(properties.getRedeliveryHorizon());
    properties
        .getProducer()
        .forEach(
            (name, value) -> {
              try {
                b.property(name, value);
              } catch (IllegalArgumentException e) {
                throw new IllegalStateException(
                    "idemkit.events.kafka.producer." + name + ": " + e.getMessage(), e);
              }
            });
    return b.build();
  }

  /** The Kafka consumer's tables (sequence per aggregate, held messages), own history table. */
  @Bean
  @ConditionalOnBean(DataSource.class)
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  @ConditionalOnProperty(prefix = "idemkit", name = "migrate-schema", matchIfMissing = true)
  public KafkaSchemaInitializer idemkitKafkaSchemaInitializer(DataSource dataSource) {
    return new KafkaSchemaInitializer(dataSource);
  }

  /**
   * Starts the Kafka consumers; each one's inbox reports to the application's {@link
   * OutboxListener} beans (the meters), as an inbox built on the embedded transport is given them,
   * and the consumer itself to the {@link KafkaConsumerListener} beans (with Micrometer, {@link
   * IdemkitKafkaMetricsAutoConfiguration}'s). The beans are looked up when a consumer starts, so a
   * listener may itself depend on the consumers.
   */
  @Bean
  @ConditionalOnBean(DataSource.class)
  @ConditionalOnMissingBean
  public KafkaConsumers idemkitKafkaConsumers(
      IdemkitKafkaProperties properties,
      DataSource dataSource,
      ObjectProvider<KafkaSchemaInitializer> schema,
      ObjectProvider<OutboxListener> listeners,
      ObjectProvider<KafkaConsumerListener> kafkaListeners,
      ObjectProvider<TenantDirectory> directory) {
    schema.ifAvailable(s -> {}); // the tables exist before a consumer starts
    checkConsumerSettings(properties, dataSource);
    Duration timeout = properties.getRetentionCheckTimeout();
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalStateException(
          "idemkit.events.kafka.retention-check-timeout must be positive: " + timeout);
    }
    topics(properties); // a bad topic name fails here, not in a consumer's thread later
    MessageRouting routing =
        dataSource instanceof TenantShards shards
            ? new ShardRouting(shards, directory.getObject())
            : null;
    return new KafkaConsumers(
        properties.getBootstrapServers(),
        dataSource,
        b -> {
          b.topics(topics(properties))
              .redeliveryHorizon(properties.getRedeliveryHorizon())
              .inboxRetention(properties.getInboxRetention())
              .acceptUnboundedRetention(properties.isAcceptUnboundedRetention())
              .retentionCheckTimeout(properties.getRetentionCheckTimeout())
              .maxAttempts(properties.getMaxAttempts())
              .sequenceStart(properties.consumer(b.name()).getFirstSequence())
              .listener(
                  FanOut.of(
                      OutboxListener.class,
                      listeners.orderedStream().toList(),
                      OutboxListener.NONE))
              .kafkaListener(
                  FanOut.of(
                      KafkaConsumerListener.class,
                      kafkaListeners.orderedStream().toList(),
                      KafkaConsumerListener.NONE));
          properties.getConsumer().forEach(b::property);
          return routing == null ? b : b.routing(routing);
        });
  }

  /**
   * The inboxes of the Kafka consumers started so far, for the inbox cleanup ({@link
   * IdemkitInboxAutoConfiguration}), which asks at every run.
   */
  @Bean
  public Inboxes idemkitKafkaInboxes(ObjectProvider<KafkaConsumers> consumers) {
    return () -> {
      KafkaConsumers started = consumers.getIfAvailable();
      return started == null
          ? List.of()
          : started.consumers().stream().map(KafkaEventConsumer::inbox).toList();
    };
  }

  /**
   * Checks {@code idemkit.events.kafka.consumer.*} now, as the producer settings are checked when
   * the transport is built: a value Kafka refuses would otherwise only kill a consumer's polling
   * thread after the application started, with nothing consumed.
   */
  private static void checkConsumerSettings(
      IdemkitKafkaProperties properties, DataSource dataSource) {
    KafkaEventConsumer.Builder probe =
        KafkaEventConsumer.builder(
            properties.getBootstrapServers(), "idemkit-settings-check", dataSource, (tx, m) -> {});
    properties
        .getConsumer()
        .forEach(
            (name, value) -> {
              try {
                probe.property(name, value);
              } catch (IllegalArgumentException e) {
                throw new IllegalStateException(
                    "idemkit.events.kafka.consumer." + name + ": " + e.getMessage(), e);
              }
            });
  }

  /**
   * The topic naming of {@code idemkit.events.kafka.topic-prefix} and {@code
   * idemkit.events.kafka.topics.*}; an explicit topic name Kafka would refuse (empty, too long,
   * characters other than letters, digits, '.', '_' and '-') fails start-up, naming the property.
   */
  static TopicNaming topics(IdemkitKafkaProperties properties) {
    properties
        .getTopics()
        .forEach(
            (type, topic) -> {
              try {
                TopicNames.validate(topic == null ? "" : topic);
              } catch (InvalidTopicException e) {
                throw new IllegalStateException(
                    "idemkit.events.kafka.topics."
                        + type
                        + "='"
                        + topic
                        + "' is not a valid Kafka topic name: "
                        + e.getMessage(),
                    e);
              }
            });
    return TopicNaming.mapped(
        properties.getTopics(), TopicNaming.prefixed(properties.getTopicPrefix()));
  }

  /** Applies {@link KafkaSchema} once, at start-up, on every database (each shard). */
  public static final class KafkaSchemaInitializer {
    KafkaSchemaInitializer(DataSource dataSource) {
      TenantShards.each(dataSource).forEach(KafkaSchema::migrate);
    }
  }

  /**
   * Tenants on shards: a consumer's message is applied on its tenant's shard, as the directory
   * placed it in memory (no statement). A tenant that is moving, or whose shard this instance does
   * not serve (another region's), cannot be applied now: its message fails and is read again after
   * the backoff, never applied on another shard.
   */
  static final class ShardRouting implements MessageRouting {
    private final TenantShards shards;
    private final TenantDirectory directory;
    private final List<String> local;

    ShardRouting(TenantShards shards, TenantDirectory directory) {
      this.shards = shards;
      this.directory = directory;
      this.local = shards.local();
    }

    @Override
    public List<String> routes() {
      return local;
    }

    @Override
    public String route(EventEnvelope message) {
      TenantDirectory.Placement placement = directory.placement(message.tenant());
      if (placement.state() == TenantDirectory.State.MOVING) {
        throw new IllegalStateException(
            "tenant " + message.tenant() + " is moving off shard " + placement.shard());
      }
      if (!local.contains(placement.shard())) {
        throw new IllegalStateException(
            "tenant "
                + message.tenant()
                + " is on shard "
                + placement.shard()
                + ", served in region "
                + shards.region(placement.shard())
                + ", not here");
      }
      return placement.shard();
    }

    @Override
    public <T> T on(String route, Callable<T> work) throws Exception {
      return shards.on(route, work);
    }

    @Override
    public DataSource dataSource(String route) {
      return shards.shard(route);
    }
  }
}
