/**
 * What a transport implements to carry outbox events: {@link dev.idemkit.outbox.spi.EventTransport}
 * for the relay's side (at least once, keyed by aggregate, acknowledged per event) and {@link
 * dev.idemkit.outbox.spi.MessageReceiver} for the consumer's side. The embedded transport and the
 * Kafka module implement both. Interfaces and their values only: nothing here logs (the module's
 * logging API is {@code java.util.logging}, see {@link dev.idemkit.outbox}).
 */
package dev.idemkit.outbox.spi;
