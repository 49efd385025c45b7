/**
 * The reference payments service: a mini shop (orders, confirm-payment, payments) made safe to
 * retry with Idemkit. This package assembles the rest: the application class and the event flow's
 * wiring (outbox relay, the consumers' inboxes, the receipt mail sender). Nothing depends on it.
 *
 * <p>The domains ({@code payments}, {@code orders}, {@code ledger}, {@code receipts}, {@code
 * shipping}) each hold their rows, their logic, their event consumer and their endpoints; {@code
 * events} appends their events; {@code web} is the HTTP layer they share; {@code erasure} deletes a
 * tenant's rows; {@code demo} holds the simulators, faults and test hooks, and plugs itself in
 * without any of the above naming it. {@code ArchitectureTest} keeps the packages free of cycles.
 */
package dev.idemkit.examples.payments;
