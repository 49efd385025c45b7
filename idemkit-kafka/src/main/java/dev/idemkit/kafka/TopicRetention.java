package dev.idemkit.kafka;

import java.time.Duration;

/**
 * How long a topic may deliver a record again, as the cluster told it when a consumer started (or
 * could not): a record can be read again for as long as the topic keeps it, e.g. from the earliest
 * offset once the group's committed offsets expired or were reset.
 */
sealed interface TopicRetention {

  /** The topic asked about. */
  String topic();

  /**
   * Records are deleted {@code retention} after they were written.
   *
   * @param source where the value comes from, for messages: {@code retention.ms=…}, or the broker's
   *     default for a topic not created yet
   */
  record Bounded(String topic, Duration retention, String source) implements TopicRetention {}

  /**
   * Records may be kept for ever: {@code retention.ms=-1}, or a {@code cleanup.policy} without
   * {@code delete} ({@code compact}: each key's latest record stays).
   *
   * @param setting the setting that says so, e.g. {@code retention.ms=-1}
   */
  record Unbounded(String topic, String setting) implements TopicRetention {
    /** Whether it is compaction (a key's latest record) rather than time that keeps records. */
    boolean compacted() {
      return setting.contains("cleanup.policy");
    }
  }

  /**
   * The cluster could not say: not reachable in time, the consumer may not describe the topic's
   * configuration, or the topic does not exist and the broker's defaults cannot be read.
   *
   * @param reason why, for the log line
   */
  record Unknown(String topic, String reason) implements TopicRetention {}
}
