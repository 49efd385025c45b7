package dev.idemkit.kafka;

import java.util.Properties;
import java.util.function.Function;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/** One client setting checked when it is set, against Kafka's own definition of it. */
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
}
