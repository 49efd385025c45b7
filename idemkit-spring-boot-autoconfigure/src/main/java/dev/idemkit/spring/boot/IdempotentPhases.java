package dev.idemkit.spring.boot;

import dev.idemkit.PhasedOperation;
import java.util.Objects;
import org.springframework.http.ResponseEntity;

/**
 * What a {@code @Idempotent(phased = true)} handler returns: the operation to run. The handler
 * itself must not write anything; the phases do, each in its own transaction.
 *
 * <pre>{@code
 * @PostMapping("/v1/payments")
 * @Idempotent(operation = "create_payment", phased = true)
 * public ResponseEntity<?> create(Principal tenant, @Valid @RequestBody CreatePayment command) {
 *   return IdempotentPhases.run(payments.newPayment(tenant.getName(), command));
 * }
 * }</pre>
 */
public final class IdempotentPhases {

  private IdempotentPhases() {}

  public static ResponseEntity<PhasedOperation<?>> run(PhasedOperation<?> operation) {
    return ResponseEntity.ok(Objects.requireNonNull(operation));
  }
}
