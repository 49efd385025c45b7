/**
 * A retrying HTTP client that makes the safe thing the easy thing: one {@code Idempotency-Key} per
 * intended operation, drawn once and reused on every retry, with exponential backoff and full
 * jitter, {@code Retry-After}, a deadline, typed failures and an optional crash-safe {@link
 * dev.idemkit.client.Journal}. Start at {@link dev.idemkit.client.IdempotentClient}. Depends on
 * nothing outside the JDK ({@code java.net.http}).
 *
 * <p>Logging: {@link System.Logger}: the client goes into other people's applications with the JDK
 * alone on its class path.
 */
package dev.idemkit.client;
