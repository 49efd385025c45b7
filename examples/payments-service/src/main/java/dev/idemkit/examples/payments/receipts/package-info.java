/**
 * Receipts: the consumer that writes one receipt per completed payment and records its mail as a
 * delivery; the mail client the delivery sender uses, where it sends ({@code payments.mail.*}, or a
 * {@code MailEndpoint} bean), and the endpoint that shows a payment's receipts and their mail's
 * status.
 */
package dev.idemkit.examples.payments.receipts;
