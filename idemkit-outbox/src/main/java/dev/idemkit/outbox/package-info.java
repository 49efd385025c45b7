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
 *       transaction with its inbox row. It is the face of package-private rooms of one purpose
 *       each: {@code InboxBatch} (a batch in one transaction, split around a failure), {@code
 *       InboxRows} (claiming rows, recording failures), {@code SequenceGate} (in sequence: apply,
 *       skip or hold), {@code HeldMessages}, {@code ParkedMessages} (and their re-queue) and {@code
 *       InboxCleanup}.
 *   <li>{@link dev.idemkit.outbox.Deliveries} and {@link dev.idemkit.outbox.DeliverySender}: side
 *       effects outside the database, recorded first, delivered under their own idempotency key.
 *   <li>{@link dev.idemkit.outbox.EmbeddedTransport}: the default, no broker.
 * </ul>
 *
 * <p>Tables: {@link dev.idemkit.outbox.OutboxSchema#migrate} applies them with a Flyway history of
 * their own, beside the record store's and the application's.
 *
 * <p>Mechanisms: the relay and the delivery sender poll on the core's {@link
 * dev.idemkit.support.PollingWorker} and space out retries with its {@link
 * dev.idemkit.support.Backoff}; every transaction of the module runs on {@link
 * dev.idemkit.jdbc.Transactions}.
 *
 * <p><b>Logging: {@code java.util.logging}</b>, in every package of this module, each part under
 * its public class's name ({@code dev.idemkit.outbox.InboxConsumer} for all the inbox's rooms).
 * Why: it is in the JDK, so the module brings no logging dependency to the application (it depends
 * on Flyway, Jackson's streaming parser and Idemkit's PostgreSQL module alone), and every logging
 * backend takes its records through a bridge (Spring Boot installs the SLF4J one by default).
 * {@code System.Logger} would serve as well; one of the two is kept, the one the module's parts and
 * its users' logging configurations already name.
 */
package dev.idemkit.outbox;
