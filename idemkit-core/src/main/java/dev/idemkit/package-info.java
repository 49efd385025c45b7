/**
 * Idemkit's public API: run an operation so that a retried request has the effect of one request
 * and gets the first request's answer (docs/contract.md).
 *
 * <ul>
 *   <li>{@link dev.idemkit.Idempotency} is the entry point; {@code execute} takes an {@link
 *       dev.idemkit.IdempotentRequest} (the {@link dev.idemkit.ScopedKey}: tenant, operation and
 *       {@link dev.idemkit.IdempotencyKey}; the request's {@link dev.idemkit.Fingerprint}; how long
 *       the answer is kept) and an {@link dev.idemkit.Operation}.
 *   <li>An operation is either a {@link dev.idemkit.LocalOperation}, whose writes commit in one
 *       transaction with the idempotency record, or a {@link dev.idemkit.PhasedOperation}, whose
 *       phases (external calls among them) each commit a recovery point, so a crashed or uncertain
 *       operation is resumed instead of run twice.
 *   <li>The answer is an {@link dev.idemkit.Outcome}, a sealed type to switch over: executed,
 *       replayed, rejected, in progress, outcome pending, a key reused with another request, or a
 *       quota exceeded. Expected answers are never exceptions.
 *   <li>Values are records ({@code IdempotencyKey}, {@code Scope}, {@code Fingerprint}, {@link
 *       dev.idemkit.StoredResponse}); configuration is an immutable {@link
 *       dev.idemkit.IdempotencyConfig} made by its builder.
 * </ul>
 *
 * <p>Depends on nothing outside the JDK. Stores and adapters implement {@link dev.idemkit.spi};
 * {@code dev.idemkit.internal} is the implementation and not API; {@link dev.idemkit.support} holds
 * the backoff and the poll loop Idemkit's own modules share.
 *
 * <p>Logging: {@link System.Logger}, the JDK's own, so the core adds no logging dependency; the
 * application's logging framework receives it through its {@code System.LoggerFinder} bridge (SLF4J
 * and Log4j ship one; Spring Boot's default setup routes it).
 */
package dev.idemkit;
