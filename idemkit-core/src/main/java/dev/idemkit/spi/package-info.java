/**
 * What a store or an adapter implements to plug into the engine.
 *
 * <ul>
 *   <li>{@link dev.idemkit.spi.IdempotencyStore}: where records live. Each decisive write is one
 *       atomic step: a claim ({@link dev.idemkit.spi.ClaimAttempt}), a takeover of a record whose
 *       owner is gone ({@link dev.idemkit.spi.Takeover}), and owner writes fenced by the owner's
 *       token ({@link dev.idemkit.spi.Ownership}), all inside a {@link
 *       dev.idemkit.spi.StoreTransaction} that the business writes can share. A write takes what it
 *       writes as values: a new record ({@link dev.idemkit.spi.NewRecord}: key, fingerprint,
 *       window), where a phased operation stands ({@link dev.idemkit.spi.Checkpoint}) and how an
 *       operation ends ({@link dev.idemkit.spi.FinalAnswer}), which a wrapper passes on whole.
 *       Every store must pass the contract suite of {@code idemkit-test} ({@code
 *       IdempotencyStoreContract}).
 *   <li>Store capabilities, which a store has or lacks and which are looked up once, at start-up
 *       ({@link dev.idemkit.spi.IdempotencyStore#capability}): {@link
 *       dev.idemkit.spi.RecoveryAdministration} (recovery backoff, escalation, operator
 *       resolutions), {@link dev.idemkit.spi.RecordCleanup} (cleanup runs, {@link
 *       dev.idemkit.spi.CleanupRun}) and {@link dev.idemkit.spi.QuotaSync} (shared quota counts).
 *   <li>{@link dev.idemkit.spi.IdempotencyListener}: events for metrics and logs, every method a
 *       no-op by default.
 *   <li>{@link dev.idemkit.spi.KeyProvider} and {@link dev.idemkit.spi.DataKeyStore}: master keys
 *       and wrapped tenant data keys for answers encrypted at rest; {@link
 *       dev.idemkit.spi.ResponseRedactor}, {@link dev.idemkit.spi.ResponseUpcaster} and {@link
 *       dev.idemkit.spi.ReferenceResolver} shape what is stored and how an old answer is replayed.
 * </ul>
 */
package dev.idemkit.spi;
