package dev.idemkit.micrometer;

import dev.idemkit.kafka.KafkaConsumerListener;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.outbox.EventEnvelope;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Meters of the Kafka inbox consumer (named like {@link OutboxMetricNames}'), tagged by consumer:
 * unreadable records, partitions sent back after a failure, the commit-to-apply lag ({@value #LAG})
 * and the number of messages held right now ({@value #HELD}), for every consumer it is the {@link
 * KafkaEventConsumer.Builder#kafkaListener} of once that one {@link KafkaConsumerListener#started
 * started} (or any consumer given to {@link #monitor}). Give it to {@link
 * KafkaEventConsumer.Builder#kafkaListener}. What the inbox does (held, released, stale, applied,
 * duplicates) goes to the {@link OutboxMetrics} given as the consumer's {@link
 * KafkaEventConsumer.Builder#listener}.
 */
public final class KafkaConsumerMetrics implements KafkaConsumerListener {

  /**
   * Gauge: the consumer's messages held right now, tag {@code consumer}. Not {@value
   * OutboxMetricNames#HELD_MESSAGES}, the untagged count of every inbox that {@link OutboxMetrics}
   * may register in the same registry: one name with two sets of tag keys is refused by Prometheus.
   */
  public static final String HELD = "kafka.inbox.held";

  public static final String UNREADABLE = "kafka.unreadable.count";
  public static final String PARTITION_RETRIES = "kafka.partition_retries.count";
  public static final String LAG = "inbox.lag.max";

  private final MeterRegistry registry;
  private final Clock clock;
  private volatile double lastLagMillis;

  public KafkaConsumerMetrics(MeterRegistry registry) {
    this(registry, Clock.systemUTC());
  }

  KafkaConsumerMetrics(MeterRegistry registry, Clock clock) {
    this.registry = registry;
    this.clock = clock;
    Gauge.builder(LAG, this, m -> m.lastLagMillis)
        .description("Occurred-at to inbox commit of the latest applied batch's oldest message")
        .baseUnit("milliseconds")
        .register(registry);
  }

  /**
   * Adds a gauge of the messages {@code consumer} holds behind gaps right now (once per consumer
   * name: Micrometer keeps the first gauge of a name and tags). Done by {@link #started} for the
   * consumers this is the listener of.
   */
  public KafkaConsumerMetrics monitor(KafkaEventConsumer consumer) {
    Gauge.builder(HELD, consumer, KafkaConsumerMetrics::heldCount)
        .tag("consumer", consumer.name())
        .description("Messages held behind a gap in their aggregate's sequence")
        .register(registry);
    return this;
  }

  private static double heldCount(KafkaEventConsumer consumer) {
    try {
      return consumer.heldSummary().count();
    } catch (Exception e) {
      return Double.NaN;
    }
  }

  @Override
  public void applied(String consumer, List<EventEnvelope> messages) {
    Instant now = clock.instant();
    Instant oldest = null;
    for (EventEnvelope m : messages) {
      if (oldest == null || m.occurredAt().isBefore(oldest)) {
        oldest = m.occurredAt();
      }
    }
    if (oldest != null) {
      lastLagMillis = Duration.between(oldest, now).toMillis();
    }
  }

  /** Monitors the consumer that started ({@link #monitor}). */
  @Override
  public void started(KafkaEventConsumer consumer) {
    monitor(consumer);
  }

  @Override
  public void unreadable(String consumer, int count) {
    counter(UNREADABLE, consumer, "Records that were not Idemkit events").increment(count);
  }

  @Override
  public void partitionRetried(String consumer) {
    counter(PARTITION_RETRIES, consumer, "Partitions sent back to a failed message").increment();
  }

  private Counter counter(String name, String consumer, String description) {
    return Counter.builder(name)
        .tag("consumer", consumer)
        .description(description)
        .register(registry);
  }
}
