/**
 * Outbox events through Kafka.
 *
 * <ul>
 *   <li>{@link dev.idemkit.kafka.KafkaTransport}: the relay's transport; one record per event on
 *       its aggregate type's topic ({@link dev.idemkit.kafka.TopicNaming}), keyed by aggregate,
 *       sent by an idempotent producer with {@code acks=all}.
 *   <li>{@link dev.idemkit.kafka.KafkaEventConsumer}: a consumer group member that applies each
 *       event once through the outbox's inbox and each aggregate's events in sequence, holding a
 *       message that arrives ahead of a gap; offsets are committed only after the inbox committed.
 *       {@link dev.idemkit.kafka.KafkaConsumers} starts and stops several with shared settings.
 *   <li>{@link dev.idemkit.kafka.KafkaSchema}: the consumer's tables (sequences, held messages).
 * </ul>
 */
package dev.idemkit.kafka;
