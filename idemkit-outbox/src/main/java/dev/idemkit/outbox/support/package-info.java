/**
 * The mechanisms every part of the outbox and its transport modules shares, one of each, so that a
 * fix to retry timing, shutdown or transaction handling is made once:
 *
 * <ul>
 *   <li>{@link dev.idemkit.outbox.support.Backoff}: the wait before a retry (the relay's events,
 *       the delivery sender's deliveries, a Kafka consumer's partitions);
 *   <li>{@link dev.idemkit.outbox.support.PollingWorker}: the poll loop (the relay's threads, the
 *       delivery sender's, a Kafka consumer's), on a scheduled executor, with a bounded stop;
 *   <li>{@link dev.idemkit.outbox.support.Transactions}: the commit-or-roll-back template (a relay
 *       round, a delivery round, an inbox batch, a cleanup batch) and the auto-committing
 *       connection for single statements;
 *   <li>{@link dev.idemkit.outbox.support.ModuleSchema}: a module's tables, applied by Flyway with
 *       a history table of the module's own.
 * </ul>
 *
 * <p>Public so that the transport modules (Kafka) use them too; they are building blocks of
 * Idemkit's own parts, not API for applications, and may change with them. Logging, where a worker
 * logs a failure nobody else handles: {@code java.util.logging}, as the rest of the module (see
 * {@link dev.idemkit.outbox}).
 */
package dev.idemkit.outbox.support;
