/**
 * Payments: creating one exactly once across retries ({@code PaymentFlow}, a phased operation whose
 * provider call is recovered by asking, never by charging again), the payment rows and their
 * events, the downstream provider's client and settings, money amounts, the payment's refusals
 * ({@code PaymentErrors}), its endpoints, and the sweep that closes payments nobody retried.
 */
package dev.idemkit.examples.payments.payments;
