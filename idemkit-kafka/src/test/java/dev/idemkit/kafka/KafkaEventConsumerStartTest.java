package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import javax.sql.DataSource;
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
}
