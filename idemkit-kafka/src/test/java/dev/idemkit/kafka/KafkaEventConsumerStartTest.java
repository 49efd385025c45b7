package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A consumer whose {@code bootstrap.servers} no Kafka client can use refuses to start, naming the
 * setting; no broker or database is reached.
 */
class KafkaEventConsumerStartTest {

  private static final DataSource NEVER_USED = new PGSimpleDataSource();

  @Test
  void bootstrapServersNoneOfWhichResolvesRefuseTheStartNamingTheSetting() {
    // .invalid never resolves (RFC 2606).
    KafkaEventConsumer consumer =
        KafkaEventConsumer.builder(
                "kafka-1.idemkit.invalid:9092", "ledger", NEVER_USED, (tx, m) -> {})
            .aggregateTypes("widget")
            .build();
    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "Kafka consumer ledger cannot start: no Kafka client can use"
                + " bootstrap.servers=kafka-1.idemkit.invalid:9092")
        .hasMessageContaining("No resolvable bootstrap urls")
        .hasMessageContaining("idemkit.events.kafka.bootstrap-servers");
  }

  @Test
  void settingsNoKafkaClientCanBeCreatedWithRefuseTheStartWithKafkasReason() {
    KafkaEventConsumer consumer =
        KafkaEventConsumer.builder("127.0.0.1:1", "ledger", NEVER_USED, (tx, m) -> {})
            .aggregateTypes("widget")
            .property("security.protocol", "SSL")
            .property("ssl.keystore.location", "/nonexistent/idemkit-keystore.jks")
            .property("ssl.keystore.password", "secret")
            .build();
    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "Kafka consumer ledger cannot start: no Kafka client can be created with its settings")
        .hasMessageContaining("/nonexistent/idemkit-keystore.jks");
  }

  /** An interceptor Kafka can load but not create: only the consumer's own client meets it. */
  public static final class FailingInterceptor extends NoOpConsumerInterceptor {
    public FailingInterceptor() {
      throw new IllegalStateException("the interceptor's licence file is missing");
    }
  }

  /** A consumer interceptor that changes nothing. */
  public static class NoOpConsumerInterceptor implements ConsumerInterceptor<String, String> {
    @Override
    public ConsumerRecords<String, String> onConsume(ConsumerRecords<String, String> records) {
      return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

    @Override
    public void close() {}

    @Override
    public void configure(Map<String, ?> configs) {}
  }

  /**
   * A client that the retention check's admin client does not meet (it ignores consumer-only
   * settings) and that cannot be created: the start fails, rather than the polling thread ending
   * before its first poll with the consumer reported started.
   */
  @Test
  void aConsumerClientThatCannotBeCreatedRefusesTheStart() {
    KafkaEventConsumer consumer =
        KafkaEventConsumer.builder("127.0.0.1:1", "ledger", NEVER_USED, (tx, m) -> {})
            .aggregateTypes("widget")
            .retentionCheckTimeout(Duration.ofMillis(200))
            .property("interceptor.classes", FailingInterceptor.class.getName())
            .build();
    try {
      assertThatThrownBy(consumer::start)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith(
              "Kafka consumer ledger cannot start: its Kafka client could not be created")
          .hasMessageContaining("the interceptor's licence file is missing");
    } finally {
      consumer.close();
    }
  }
}
