package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Producer settings the transport's guarantees rest on are refused when given, not at a send. */
class KafkaTransportSettingsTest {

  @Test
  void aTransactionalIdIsRefusedNamingTheSetting() {
    assertThatThrownBy(
            () -> KafkaTransport.builder("127.0.0.1:1").property("transactional.id", "relay-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("transactional.id=relay-1 refused: ")
        .hasMessageContaining("not transactional")
        .hasMessageEndingWith("remove the setting");
  }

  @Test
  void ignoringTheAggregateKeyWhenPartitioningIsRefused() {
    for (Object ignore : new Object[] {"true", "TRUE", true}) {
      assertThatThrownBy(
              () ->
                  KafkaTransport.builder("127.0.0.1:1").property("partitioner.ignore.keys", ignore))
          .as("partitioner.ignore.keys=%s", ignore)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("partitioner.ignore.keys=" + ignore + " refused: ")
          .hasMessageContaining("keyed by aggregate id");
    }
    // Restating Kafka's default is fine.
    assertThat(
            KafkaTransport.builder("127.0.0.1:1")
                .property("partitioner.ignore.keys", "false")
                .producerProperties())
        .containsEntry("partitioner.ignore.keys", "false");
  }

  @Test
  void aValueKafkaWouldRefuseIsRefusedWhenGivenNamingTheSettingAndTheValue() {
    Object[][] bad = {
      {"compression.type", "zip"}, // no such codec
      {"linger.ms", "soon"}, // not a number
      {"batch.size", -1}, // below the minimum
      {"enable.metrics.push", "maybe"} // not a boolean
    };
    for (Object[] setting : bad) {
      String name = (String) setting[0];
      assertThatThrownBy(() -> KafkaTransport.builder("127.0.0.1:1").property(name, setting[1]))
          .as("%s=%s", name, setting[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("invalid producer setting " + name + "=" + setting[1] + ": ");
    }
  }

  @Test
  void validValuesAndSettingsKafkaDoesNotDefineAreKept() {
    assertThat(
            KafkaTransport.builder("127.0.0.1:1")
                .property("compression.type", "zstd")
                .property("linger.ms", 20)
                .property("my.interceptor.option", "anything")
                .producerProperties())
        .containsEntry("compression.type", "zstd")
        .containsEntry("linger.ms", 20)
        .containsEntry("my.interceptor.option", "anything");
  }
}
