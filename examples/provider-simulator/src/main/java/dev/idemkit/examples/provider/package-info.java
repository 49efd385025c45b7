/**
 * The simulated downstream payment provider the payments service charges: an HTTP server on the
 * JDK's {@code com.sun.net.httpserver} that deduplicates charges by their idempotency key, answers
 * lookups by key, and fails in every realistic way on request ({@link
 * dev.idemkit.examples.provider.Fault}: an answer lost after the charge, a timeout, a 5xx before
 * charging, a decline). It runs inside the service in the demo or alone ({@link
 * dev.idemkit.examples.provider.ProviderSimulatorMain}).
 */
package dev.idemkit.examples.provider;
