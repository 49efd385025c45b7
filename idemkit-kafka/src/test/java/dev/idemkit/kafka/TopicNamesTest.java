package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.errors.InvalidTopicException;
import org.junit.jupiter.api.Test;

class TopicNamesTest {

  @Test
  void acceptsLettersDigitsDotsUnderscoresAndDashesUpTo249Characters() {
    assertThatCode(() -> TopicNames.validate("idemkit.events.payment_v2-EU"))
        .doesNotThrowAnyException();
    assertThatCode(() -> TopicNames.validate("a".repeat(249))).doesNotThrowAnyException();
  }

  @Test
  void refusesWhatABrokerRefuses() {
    for (String topic : new String[] {"", ".", "..", "a".repeat(250), "events/payment", "é"}) {
      assertThatThrownBy(() -> TopicNames.validate(topic), topic)
          .isInstanceOf(InvalidTopicException.class)
          .hasMessageContaining("Topic name");
    }
  }
}
