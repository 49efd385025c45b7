/**
 * Events across boundaries, on PostgreSQL.
 *
 * <ul>
 *   <li>{@link dev.idemkit.outbox.Outbox}: append an event in the caller's transaction, with an id
 *       derived from what it means ({@link dev.idemkit.outbox.EventIds}); operators' backlog,
 *       parked events and re-queue.
 *   <li>{@link dev.idemkit.outbox.OutboxRelay}: sends committed events through an {@link
 *       dev.idemkit.outbox.spi.EventTransport}, at least once, in each aggregate's order, safe with
 *       several relays at once.
 *   <li>{@link dev.idemkit.outbox.InboxConsumer}: applies each message once per consumer, in one
 *       transaction with its inbox row.
 *   <li>{@link dev.idemkit.outbox.Deliveries} and {@link dev.idemkit.outbox.DeliverySender}: side
 *       effects outside the database, recorded first, delivered under their own idempotency key.
 *   <li>{@link dev.idemkit.outbox.EmbeddedTransport}: the default, no broker.
 * </ul>
 *
 * <p>Tables: {@link dev.idemkit.outbox.OutboxSchema#migrate} applies them with a Flyway history of
 * their own, beside the record store's and the application's.
 */
package dev.idemkit.outbox;
