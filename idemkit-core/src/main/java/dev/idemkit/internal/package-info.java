/**
 * Idemkit's implementation: not API. Nothing here is kept compatible between releases; other
 * Idemkit modules may use it, applications should not.
 *
 * <p>The engine that runs claims, phases, takeovers and recovery against a store; the store wrapper
 * that redacts, encrypts and upcasts stored answers; the tenants' key ring; and the strict JSON
 * parser and RFC 8785 canonical JSON writer behind fingerprints and stored headers.
 */
package dev.idemkit.internal;
