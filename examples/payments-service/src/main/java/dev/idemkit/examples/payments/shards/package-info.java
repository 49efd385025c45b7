/**
 * The service on several databases ({@code idemkit.shards.*}, docs/scaling.md): the lanes its
 * background work runs in, its migrations on every shard, where an operator's work runs, and moving
 * a tenant to another shard. Without shards there is one lane, the application's {@code
 * DataSource}.
 */
package dev.idemkit.examples.payments.shards;
