/**
 * The mechanisms Idemkit's modules share, one of each, so that a fix to retry timing or shutdown is
 * made once:
 *
 * <ul>
 *   <li>{@link dev.idemkit.support.Backoff}: the wait before a retry (a {@link
 *       dev.idemkit.RecoverySchedule}'s waits, the outbox relay's events, the delivery sender's
 *       deliveries, a Kafka consumer's partitions, the Spring Boot starter's wait for a request in
 *       progress);
 *   <li>{@link dev.idemkit.support.PollingWorker}: the poll loop (the outbox relay, the delivery
 *       sender, a Kafka consumer, the starter's cleanup, quota and recovery workers), on a
 *       scheduled executor, with a bounded stop.
 * </ul>
 *
 * <p>Public so that Idemkit's own modules and adapters use them; they are building blocks of those,
 * not API for applications, and may change with them. Plain JDK, as the rest of the core; a worker
 * logs a failure nobody else handles through {@link System.Logger} (see {@link dev.idemkit}).
 */
package dev.idemkit.support;
