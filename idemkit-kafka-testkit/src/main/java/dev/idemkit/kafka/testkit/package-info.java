/**
 * A real single-node Kafka broker for tests and benchmarks ({@link
 * dev.idemkit.kafka.testkit.KafkaBroker}), run in a child JVM so that it can be stopped, killed and
 * restarted like a real one.
 */
package dev.idemkit.kafka.testkit;
