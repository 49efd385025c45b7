/**
 * The mini shop's orders: creating one (replayed by reference), confirming its payment exactly
 * once, the order rows and the order commands.
 */
package dev.idemkit.examples.payments.orders;
