package dev.idemkit.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring MVC handler method safe to retry with an {@code Idempotency-Key} header: the first
 * request runs the method in one transaction with its idempotency record, every retry with the same
 * key and the same command gets the first answer replayed, and the same key with another command is
 * refused. The request is claimed only after binding, validation and authentication succeeded, so a
 * refused request leaves no record.
 *
 * <pre>{@code
 * @PostMapping("/v1/payments")
 * @Idempotent(operation = "create_payment")
 * ResponseEntity<Payment> create(@Valid @RequestBody CreatePayment command) { ... }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /** The stable operation name; part of the scope and of the fingerprint. */
  String operation();

  /** Whether a request without a key is refused (400 {@code IDEMPOTENCY_KEY_MISSING}). */
  boolean required() default true;

  /**
   * How long a record answers retries, as an ISO-8601 duration ({@code PT24H}); empty: {@code
   * idemkit.default-ttl}. Part of the published contract of the endpoint.
   */
  String ttl() default "";

  /**
   * For operations with an external call: the handler only builds the operation and returns it,
   * declared as {@link dev.idemkit.PhasedOperation}; Idemkit runs its phases, each in its own
   * transaction, and answers with the outcome (409 {@code IDEMPOTENCY_OUTCOME_PENDING} while a
   * downstream outcome is unknown). The handler itself must not write anything; the phases do.
   *
   * <pre>{@code
   * @PostMapping("/v1/payments")
   * @Idempotent(operation = "create_payment", phased = true)
   * public PhasedOperation<Progress> create(Principal tenant, @Valid @RequestBody CreatePayment command) {
   *   return payments.newPayment(tenant.getName(), command);
   * }
   * }</pre>
   */
  boolean phased() default false;

  /**
   * The failure statuses (4xx, 5xx) of this operation that are stored and replayed for the whole
   * window, whether the handler returns them or throws them (a Spring {@code ErrorResponse}): a
   * deterministic refusal such as a 402 decline. Any other failure status is answered once and not
   * stored (its transaction is rolled back), so a retry runs again: say a transient 409 conflict on
   * the state of another resource. Empty: {@code idemkit.replayable-statuses}. Not for a {@link
   * #phased()} operation, whose steps decide what is stored: start-up fails if it names any.
   */
  int[] replayedStatuses() default {};

  /**
   * The schema version of this operation's answer, stored with it. Raise it when the answer's shape
   * changes, and register an {@link IdempotentUpcaster} from the old version, so that answers
   * stored before the deploy are replayed in the new shape.
   */
  int schemaVersion() default 1;
}
