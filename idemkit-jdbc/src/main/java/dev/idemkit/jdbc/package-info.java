/**
 * The PostgreSQL store.
 *
 * <ul>
 *   <li>{@link dev.idemkit.jdbc.PostgresIdempotencyStore}: the record store, one SQL statement per
 *       decisive write (the claim is {@code INSERT … ON CONFLICT DO NOTHING}, a takeover one
 *       conditional {@code UPDATE}), each written out whole beside the code that runs it.
 *   <li>{@link dev.idemkit.jdbc.JdbcTransactions}: how the store gets its connection, so the record
 *       and the business rows commit in one transaction ({@code JdbcTransactions.of(dataSource)} by
 *       default, the caller's in a framework).
 *   <li>{@link dev.idemkit.jdbc.Transactions}: Idemkit's one transaction template on plain JDBC
 *       (commit, or roll back and rethrow the work's failure), under the store's own transactions
 *       and the outbox's; public for Idemkit's modules, not API for applications.
 *   <li>{@link dev.idemkit.jdbc.IdemkitSchema}: the tables, from versioned SQL files with their own
 *       migration history; {@link dev.idemkit.jdbc.IdemkitDatabase}: a server by JDBC URL or an
 *       embedded PostgreSQL with its data kept on disk.
 *   <li>{@link dev.idemkit.jdbc.PostgresDataKeyStore}: wrapped tenant data keys for encryption at
 *       rest.
 * </ul>
 *
 * <p>Logging: {@link System.Logger}, as the core's, for the same reason: no logging dependency of
 * the module's own.
 */
package dev.idemkit.jdbc;
