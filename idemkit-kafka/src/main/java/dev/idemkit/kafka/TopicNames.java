package dev.idemkit.kafka;

import org.apache.kafka.common.errors.InvalidTopicException;

/**
 * What Kafka accepts as a topic name, checked before a consumer starts: at most 249 characters of
 * ASCII letters and digits, '.', '_' and '-', and neither "." nor "..". Written here because the
 * client's own check is in an internal package of Kafka's, not its API; the rule is the broker's
 * documented one.
 */
public final class TopicNames {

  /** The longest topic name a broker accepts. */
  static final int MAX_LENGTH = 249;

  private TopicNames() {}

  /**
   * @throws InvalidTopicException saying what is wrong with {@code topic}
   */
  public static void validate(String topic) {
    if (topic.isEmpty()) {
      throw new InvalidTopicException("Topic name is illegal, it can't be empty");
    }
    if (topic.equals(".") || topic.equals("..")) {
      throw new InvalidTopicException("Topic name cannot be \".\" or \"..\"");
    }
    if (topic.length() > MAX_LENGTH) {
      throw new InvalidTopicException(
          "Topic name is illegal, it can't be longer than "
              + MAX_LENGTH
              + " characters, topic name: "
              + topic);
    }
    for (int i = 0; i < topic.length(); i++) {
      char ch = topic.charAt(i);
      boolean legal =
          (ch >= 'a' && ch <= 'z')
              || (ch >= 'A' && ch <= 'Z')
              || (ch >= '0' && ch <= '9')
              || ch == '.'
              || ch == '_'
              || ch == '-';
      if (!legal) {
        throw new InvalidTopicException(
            "Topic name \""
                + topic
                + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_'"
                + " and '-'");
      }
    }
  }

  /**
   * @throws IllegalArgumentException naming the consumer, the aggregate type and its topic, if the
   *     topic is not a valid Kafka topic name
   */
  static void validateFor(String consumer, String aggregateType, String topic) {
    try {
      validate(topic);
    } catch (InvalidTopicException e) {
      throw new IllegalArgumentException(
          "Kafka consumer "
              + consumer
              + ": the topic of aggregate type "
              + aggregateType
              + " ('"
              + topic
              + "') is not a valid Kafka topic name: "
              + e.getMessage(),
          e);
    }
  }
}
