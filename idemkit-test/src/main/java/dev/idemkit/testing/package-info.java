/**
 * Test support for stores and applications: {@link dev.idemkit.testing.IdempotencyStoreContract},
 * the suite every store must pass (a store's test extends it); {@link
 * dev.idemkit.testing.InMemoryIdempotencyStore}, a store for unit tests that passes the same suite;
 * {@link dev.idemkit.testing.MutableClock}, time a test moves by hand; and {@link
 * dev.idemkit.testing.RecordingListener}, which keeps what the engine reported. Servers for
 * failover tests are in {@code dev.idemkit.testing.postgres}.
 */
package dev.idemkit.testing;
