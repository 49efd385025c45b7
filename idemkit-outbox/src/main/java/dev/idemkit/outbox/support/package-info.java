/**
 * What the outbox and its transport modules share beyond Idemkit's common mechanisms: {@link
 * dev.idemkit.outbox.support.ModuleSchema}, a module's tables applied by Flyway with a history
 * table of the module's own.
 *
 * <p>The retry wait, the poll loop and the transaction template they run on are Idemkit's one of
 * each: {@link dev.idemkit.support.Backoff} and {@link dev.idemkit.support.PollingWorker} in the
 * core, {@link dev.idemkit.jdbc.Transactions} in the PostgreSQL store's module.
 *
 * <p>Public so that the transport modules (Kafka) use it too; it is a building block of Idemkit's
 * own parts, not API for applications, and may change with them.
 */
package dev.idemkit.outbox.support;
