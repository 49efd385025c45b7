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
 *       It polls on the core's {@link dev.idemkit.support.PollingWorker} and backs a failing
 *       partition off with its {@link dev.idemkit.support.Backoff}. {@link
 *       dev.idemkit.kafka.KafkaConsumers} starts and stops several with shared settings.
 *   <li>{@link dev.idemkit.kafka.KafkaSchema}: the consumer's tables (sequences, held messages).
 *   <li>Package-private: the topics' retention check at start-up ({@code RetentionCheck}), the
 *       settings checked against Kafka's own definitions ({@code KafkaSettings}), and the topic
 *       name rule ({@code TopicNames}). Only Kafka's public client API is used, none of its {@code
 *       internals} packages.
 * </ul>
 *
 * <p><b>Logging: {@code java.util.logging}</b>, like the outbox module this one extends: a
 * consumer's log lines come from its inbox too, which logs so, and one API across the two modules
 * lets one logging configuration (by logger name) cover a consumer. Its polling worker logs through
 * the core's {@link System.Logger}, which reaches the same backend. The Kafka client logs through
 * SLF4J on its own; that is the client's, not this module's.
 */
package dev.idemkit.kafka;
