/**
 * Micrometer meters for the engine ({@link dev.idemkit.micrometer.IdempotencyMetrics}: a listener
 * plus a {@code MeterBinder}), the outbox ({@link dev.idemkit.micrometer.OutboxMetrics}) and the
 * Kafka consumer ({@link dev.idemkit.micrometer.KafkaConsumerMetrics}). Every meter name is a
 * constant in {@link dev.idemkit.micrometer.IdempotencyMetricNames} or {@link
 * dev.idemkit.micrometer.OutboxMetricNames}.
 *
 * <p>Logging: {@link System.Logger}, as the core's: the meters add Micrometer and nothing else.
 */
package dev.idemkit.micrometer;
