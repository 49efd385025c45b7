/**
 * A black-box checker of any HTTP endpoint's idempotency-key behaviour. {@code java -jar
 * idemkit-conformance.jar} ({@link dev.idemkit.conformance.ConformanceMain}) runs its checks
 * against one endpoint, judges the answers by a profile (the IETF draft, Stripe's semantics, or a
 * custom mapping, {@link dev.idemkit.conformance.Profile}), reports each check, and exits non-zero
 * if any failed (or, with {@code --fail-on guarantee}, only if one broke the idempotency
 * guarantee). Only the command line is public.
 *
 * <p>Where things live:
 *
 * <ul>
 *   <li>{@link dev.idemkit.conformance.Options}: the command line, parsed by picocli (which prints
 *       {@code --help}), each value checked with an error that names its option.
 *   <li>{@link dev.idemkit.conformance.Checker}: the first request, then the checks in order; one
 *       class per concern: {@code KeyChecks}, {@code ReplayChecks}, {@code MismatchChecks}, {@code
 *       RaceChecks}, {@code ScopeChecks}, {@code ErrorChecks}.
 *   <li>{@link dev.idemkit.conformance.Endpoint}: requests, the effect count, and what a client
 *       does after an in-progress answer or a failure (retries the same key until the answer
 *       settles).
 *   <li>{@link dev.idemkit.conformance.Findings} and {@link dev.idemkit.conformance.Answers}: what
 *       a check found, each problem a breach of the guarantee or a difference from the profile, put
 *       into words.
 *   <li>{@link dev.idemkit.conformance.RawHttp} and {@link dev.idemkit.conformance.LossyProxy}:
 *       HTTP on the checker's own sockets (for malformed headers and requests released together),
 *       and an answer lost in transit.
 *   <li>{@link dev.idemkit.conformance.Reports}: text, JSON (Jackson, {@link
 *       dev.idemkit.conformance.JsonDocuments}) and JUnit XML.
 * </ul>
 */
package dev.idemkit.conformance;
