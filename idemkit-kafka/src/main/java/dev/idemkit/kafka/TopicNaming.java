package dev.idemkit.kafka;

import java.util.Map;
import java.util.Objects;

/** The topic an aggregate type's events are sent to and read from. */
@FunctionalInterface
public interface TopicNaming {

  /** The topic for events of {@code aggregateType} (e.g. {@code payment}). */
  String topicFor(String aggregateType);

  /** {@code prefix + aggregateType}, e.g. {@code idemkit.events.payment}. */
  static TopicNaming prefixed(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    return aggregateType -> prefix + aggregateType;
  }

  /** The names in {@code explicit}; other aggregate types fall back to {@code otherwise}. */
  static TopicNaming mapped(Map<String, String> explicit, TopicNaming otherwise) {
    Map<String, String> copy = Map.copyOf(explicit);
    Objects.requireNonNull(otherwise, "otherwise");
    return aggregateType -> copy.getOrDefault(aggregateType, otherwise.topicFor(aggregateType));
  }
}
