package dev.idemkit.examples.payments.events;

import dev.idemkit.outbox.Outbox;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code payments.events.*}: the outbox relay, the consumers' inboxes, the receipt
 * mail sender. Every setting has a default.
 *
 * @param relayThreads relay threads in this instance (several instances relay safely together)
 * @param batchSize events per relay round
 * @param pollInterval pause after a round that was not full
 * @param maxAttempts an event is parked after this many failed rounds
 * @param initialBackoff wait after an event's first failure, doubling up to {@code maxBackoff}
 * @param maxBackoff the longest wait between an event's attempts
 * @param consumerMaxAttempts a message is parked in a consumer's inbox after this many failures
 * @param inboxRetention how long consumers remember processed message ids (must exceed {@code
 *     redeliveryHorizon})
 * @param redeliveryHorizon how long after an event's first delivery it may come again (parked
 *     events are re-queued within it)
 * @param deliveryMaxAttempts a receipt mail is parked after this many failed deliveries
 * @param deliveryRetention how long a delivered receipt mail's row (its key) is kept (default 14
 *     days); not shorter than the receipts consumer's inbox retention ({@code inboxRetention}, on
 *     Kafka {@code idemkit.events.kafka.inbox-retention}): the service refuses to start otherwise
 * @param aggregateWindow unsent events of one aggregate a relay round may carry (default: 1 on the
 *     embedded transport; 8 on Kafka, whose consumers apply each aggregate's events in sequence and
 *     hold one that comes early)
 * @param maxPayloadBytes the largest event payload the outbox accepts, in UTF-8 bytes (default
 *     {@link Outbox#DEFAULT_MAX_PAYLOAD_BYTES}, 900 KiB: under Kafka's default 1 MiB record with
 *     room for the headers); a larger one is refused at append
 */
@ConfigurationProperties("payments.events")
public record EventsProperties(
    Integer relayThreads,
    Integer batchSize,
    Duration pollInterval,
    Integer maxAttempts,
    Duration initialBackoff,
    Duration maxBackoff,
    Integer consumerMaxAttempts,
    Duration inboxRetention,
    Duration redeliveryHorizon,
    Integer deliveryMaxAttempts,
    Duration deliveryRetention,
    Integer aggregateWindow,
    Integer maxPayloadBytes) {

  public EventsProperties {
    relayThreads = relayThreads == null ? 2 : relayThreads;
    batchSize = batchSize == null ? 200 : batchSize;
    pollInterval = pollInterval == null ? Duration.ofMillis(20) : pollInterval;
    maxAttempts = maxAttempts == null ? 10 : maxAttempts;
    initialBackoff = initialBackoff == null ? Duration.ofSeconds(1) : initialBackoff;
    maxBackoff = maxBackoff == null ? Duration.ofMinutes(1) : maxBackoff;
    consumerMaxAttempts = consumerMaxAttempts == null ? 5 : consumerMaxAttempts;
    inboxRetention = inboxRetention == null ? Duration.ofDays(14) : inboxRetention;
    redeliveryHorizon = redeliveryHorizon == null ? Duration.ofDays(7) : redeliveryHorizon;
    deliveryMaxAttempts = deliveryMaxAttempts == null ? 10 : deliveryMaxAttempts;
    deliveryRetention = deliveryRetention == null ? Duration.ofDays(14) : deliveryRetention;
    maxPayloadBytes = maxPayloadBytes == null ? Outbox.DEFAULT_MAX_PAYLOAD_BYTES : maxPayloadBytes;
    // aggregateWindow stays null when unset: EventFlow picks it by transport.
  }
}
