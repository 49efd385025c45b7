/**
 * The client's implementation: not API. Nothing here is kept compatible between releases; other
 * Idemkit modules may use it, applications should not.
 *
 * <p>The small JSON reader behind the client's journal and the conformance checker.
 */
package dev.idemkit.client.internal;
