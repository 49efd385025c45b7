/**
 * The domains' events: appending one to the outbox in the current transaction ({@code Events}), the
 * event flow's settings ({@code payments.events.*}), and the shapes the event flow is wired from
 * (the consumers' handlers, their inboxes, the relay's transport). It knows no domain.
 */
package dev.idemkit.examples.payments.events;
