package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.outbox.EventEnvelope;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Settings the polling thread would die of (or warn about for ever) after start-up are refused when
 * the consumer is configured or built, naming the setting; no broker or database is reached.
 */
class KafkaEventConsumerSettingsTest {

  private static final DataSource NEVER_USED = new PGSimpleDataSource();

  private static KafkaEventConsumer.Builder builder() {
    return KafkaEventConsumer.builder("127.0.0.1:1", "ledger", NEVER_USED, (tx, m) -> {})
        .aggregateTypes("widget");
  }

  @Test
  void aValueKafkaRefusesIsRefusedWhenSet() {
    assertThatThrownBy(() -> builder().property("max.poll.records", "abc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max.poll.records");
    assertThatThrownBy(() -> builder().property("max.poll.records", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max.poll.records");
  }

  @Test
  void theGroupAndTheOffsetResetTheInboxReliesOnCannotBeChanged() {
    assertThatThrownBy(() -> builder().property("group.id", "shared"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("group.id");
    assertThatThrownBy(() -> builder().property("auto.offset.reset", "latest"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("auto.offset.reset");
    assertThatThrownBy(() -> builder().property("enable.auto.commit", "true"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("enable.auto.commit");
    // Restating what the consumer sets anyway is fine.
    assertThat(
            builder()
                .property("group.id", "ledger")
                .property("auto.offset.reset", "earliest")
                .property("max.poll.records", "50")
                .build()
                .name())
        .isEqualTo("ledger");
  }

  @Test
  void aTopicNameKafkaRefusesFailsTheBuild() {
    for (String bad : new String[] {"", "bad topic!", "x".repeat(250), ".."}) {
      assertThatThrownBy(
              () ->
                  builder()
                      .topics(TopicNaming.mapped(Map.of("widget", bad), TopicNaming.prefixed("e.")))
                      .build())
          .as("topic '%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("aggregate type widget")
          .hasMessageContaining("not a valid Kafka topic name");
    }
  }

  @Test
  void aRoutingWithNoDatabaseIsRefused() {
    MessageRouting none =
        new MessageRouting() {
          @Override
          public List<String> routes() {
            return List.of();
          }

          @Override
          public String route(EventEnvelope message) {
            throw new IllegalStateException("no route");
          }

          @Override
          public <T> T on(String route, Callable<T> work) {
            throw new IllegalStateException("no route");
          }

          @Override
          public DataSource dataSource(String route) {
            throw new IllegalStateException("no route");
          }
        };
    assertThatThrownBy(() -> builder().routing(none))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Kafka consumer ledger: routing has no route");
  }
}
