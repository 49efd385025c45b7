/**
 * Real PostgreSQL servers for tests that need more than one: {@link
 * dev.idemkit.testing.postgres.ReplicatedPostgres}, a primary and its streaming standbys from the
 * machine's binaries, for failover tests and the chaos run's failover nemesis.
 */
package dev.idemkit.testing.postgres;
