/**
 * The client's implementation: not API. Nothing here is kept compatible between releases; other
 * Idemkit modules may use it, applications should not.
 *
 * <p>{@link dev.idemkit.client.internal.Json}: the client's one JSON codec (why not a library: its
 * header), also read by the conformance checker.
 */
package dev.idemkit.client.internal;
