package dev.idemkit.kafka;

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
}
