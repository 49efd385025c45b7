/**
 * The ledger: the consumer that books each completed payment as double entry, once, and the
 * endpoints that show a payment's entries and an account's balance.
 */
package dev.idemkit.examples.payments.ledger;
