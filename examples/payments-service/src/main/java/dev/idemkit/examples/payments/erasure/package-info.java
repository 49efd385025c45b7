/** A tenant's erasure: its business rows and event payloads, beside the crypto-shredding. */
package dev.idemkit.examples.payments.erasure;
