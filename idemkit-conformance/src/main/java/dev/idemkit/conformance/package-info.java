/**
 * A black-box checker of any HTTP endpoint's {@code Idempotency-Key} behaviour. {@code java -jar
 * idemkit-conformance.jar} ({@link dev.idemkit.conformance.ConformanceMain}) runs its checks
 * against one endpoint (replays, mismatches, concurrent duplicates, an answer lost in transit,
 * malformed keys), judges the answers by a profile (the IETF draft, Stripe's semantics, or a custom
 * mapping), reports each check, and exits non-zero if any failed. Only the command line is public.
 */
package dev.idemkit.conformance;
