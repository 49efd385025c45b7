/**
 * What a transport implements to carry outbox events: {@link dev.idemkit.outbox.spi.EventTransport}
 * for the relay's side (at least once, keyed by aggregate, acknowledged per event) and {@link
 * dev.idemkit.outbox.spi.MessageReceiver} for the consumer's side. The embedded transport and the
 * Kafka module implement both.
 */
package dev.idemkit.outbox.spi;
