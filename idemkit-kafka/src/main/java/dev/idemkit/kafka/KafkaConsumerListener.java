package dev.idemkit.kafka;

/**
 * Told what a {@link KafkaEventConsumer} does beyond what its inbox reports (applied, duplicates,
 * failures, parked, held, released and stale messages go to the {@link
 * dev.idemkit.outbox.OutboxListener}); for meters. Every method has a no-op default. Called on the
 * consumer's thread; must be fast and must not throw (one that throws anyway is logged and ignored:
 * it decides neither the batch nor its offsets).
 */
public interface KafkaConsumerListener {

  /** Does nothing. */
  KafkaConsumerListener NONE = new KafkaConsumerListener() {};

  /**
   * These messages were applied, their inbox transaction committed (before their offsets are
   * committed): for end-to-end latency ({@code now - occurredAt}) and throughput.
   */
  default void applied(
      String consumer, java.util.List<dev.idemkit.outbox.EventEnvelope> messages) {}

  /** {@code count} records were not Idemkit events (missing or malformed headers); skipped. */
  default void unreadable(String consumer, int count) {}

  /** A partition was sent back to a failed message's offset, to be read again after a backoff. */
  default void partitionRetried(String consumer) {}

  /**
   * {@code consumer} started polling ({@link KafkaEventConsumer#start}, once per start): for meters
   * that read it (its held messages, say). Called on the thread that started it.
   */
  default void started(KafkaEventConsumer consumer) {}
}
