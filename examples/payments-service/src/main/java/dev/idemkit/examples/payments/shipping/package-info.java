/**
 * Shipping: the consumer that requests one shipment per paid order, and the endpoint that shows it.
 */
package dev.idemkit.examples.payments.shipping;
