package dev.idemkit.kafka;

import java.util.Properties;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka client settings: each checked when it is set, against Kafka's own definition of it; the
 * consumer settings Idemkit's guarantees rest on; and the consumer client the settings make.
 */
final class KafkaSettings {

  private KafkaSettings() {}

  /**
   * Parses {@code value} as the type {@code definition} gives {@code name} and runs its validator,
   * so that a value the client would refuse at start (an unknown {@code compression.type}, a {@code
   * linger.ms} that is no number) is refused now. A name the definition does not know passes: the
   * client only warns of it.
   *
   * @param kind {@code producer} or {@code consumer}, for the message
   * @throws IllegalArgumentException "invalid {@code kind} setting name=value: " and Kafka's reason
   */
  static void check(ConfigDef definition, String kind, String name, Object value) {
    ConfigDef.ConfigKey key = definition.configKeys().get(name);
    if (key == null) {
      return;
    }
    try {
      Object parsed = ConfigDef.parseType(name, value, key.type);
      if (key.validator != null) {
        key.validator.ensureValid(name, parsed);
      }
    } catch (ConfigException e) {
      throw new IllegalArgumentException(
          "invalid " + kind + " setting " + name + "=" + value + ": " + e.getMessage(), e);
    }
  }

  /**
   * Checks the settings together, as the client will when it is created ({@code config}: {@code
   * ProducerConfig::new} or {@code ConsumerConfig::new}), so that a combination it refuses is
   * refused when the transport or consumer is built, not on a thread after start-up.
   *
   * @param what who is built, for the message ({@code "invalid producer setting"}, …)
   * @throws IllegalArgumentException {@code what}, then Kafka's reason
   */
  static void checkAll(Properties settings, Function<Properties, ?> config, String what) {
    try {
      config.apply(settings);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(what + ": " + e.getMessage(), e);
    }
  }

  /**
   * Refuses the consumer settings the guarantees rest on, set otherwise than Idemkit sets them:
   * auto-commit stays off (offsets follow the inbox), the group is the consumer's name (one group
   * per consumer), and a group with no committed offset starts at the earliest record.
   *
   * @throws IllegalArgumentException naming the setting and why
   */
  static void checkConsumerGuarantees(String consumerName, String name, Object value) {
    String text = String.valueOf(value);
    if (name.equals(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG) && !"false".equals(text)) {
      throw new IllegalArgumentException(
          "enable.auto.commit would commit offsets before the inbox committed; refused");
    }
    if (name.equals(ConsumerConfig.GROUP_ID_CONFIG) && !consumerName.equals(text)) {
      throw new IllegalArgumentException(
          "group.id="
              + text
              + " refused: each consumer's group is the consumer's name, set by Idemkit (a group"
              + " shared by two consumers would split their events between them)");
    }
    if (name.equals(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG) && !"earliest".equals(text)) {
      throw new IllegalArgumentException(
          "auto.offset.reset="
              + text
              + " would let a new consumer skip the events already on its topics; refused"
              + " (only earliest)");
    }
  }

  /**
   * The Kafka client of consumer {@code consumerName}, with its settings.
   *
   * @throws IllegalStateException with Kafka's reason, if the client cannot be created with them
   *     (no host of {@code bootstrap.servers} resolves, an interceptor or metric reporter fails)
   */
  static KafkaConsumer<String, String> newConsumer(String consumerName, Properties settings) {
    try {
      return new KafkaConsumer<>(settings, new StringDeserializer(), new StringDeserializer());
    } catch (KafkaException e) {
      Throwable root = RetentionCheck.rootCause(e);
      throw new IllegalStateException(
          "Kafka consumer "
              + consumerName
              + " cannot start: its Kafka client could not be created ("
              + root.getClass().getSimpleName()
              + ": "
              + root.getMessage()
              + ")",
          e);
    }
  }
}
