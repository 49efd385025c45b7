package dev.idemkit.examples.payments;

import jakarta.validation.Valid;
import java.net.URI;
import java.security.Principal;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmark's baseline, and nothing else: {@code POST /v1/bench/payments-raw} does exactly the
 * handler work of {@link PaymentsController#create} (same request type and validation, the payment
 * and its outbox event written by {@link PaymentRepository#create} in one transaction, the same 201
 * with {@code Location} and JSON body) without {@code @Idempotent}, so {@code bench/http} can
 * measure what the idempotency layer costs on a real HTTP request. It is under {@code /v1/}, so it
 * passes the same {@link ApiGateFilter} (authentication) as the real endpoint.
 *
 * <p>It exists only under the Spring profile {@code bench}; a service started without that profile
 * has no such endpoint. It is not safe to retry: never expose it.
 */
@RestController
@Profile("bench")
public class BenchRawPaymentsController {

  private final PaymentRepository payments;

  public BenchRawPaymentsController(PaymentRepository payments) {
    this.payments = payments;
  }

  /** {@link PaymentsController#create} without the idempotency layer: one plain transaction. */
  @PostMapping(path = "/v1/bench/payments-raw", consumes = "application/json")
  @Transactional
  public ResponseEntity<PaymentResponse> create(
      Principal tenant, @Valid @RequestBody CreatePaymentRequest request) {
    PaymentResponse payment =
        payments
            .create(tenant.getName(), request, "COMPLETED")
            .orElseThrow(() -> alreadyExists(tenant.getName(), request));
    return ResponseEntity.created(URI.create("/v1/payments/" + payment.paymentId())).body(payment);
  }

  /** The same 409 as {@link PaymentsController}: the merchant reference already has a payment. */
  private ErrorResponseException alreadyExists(String tenant, CreatePaymentRequest request) {
    String existing =
        payments
            .findIdByBusinessKey(tenant, request.accountId(), request.merchantReference())
            .orElse("unknown");
    ProblemDetail problem =
        Errors.problem(
            HttpStatus.CONFLICT,
            "PAYMENT_ALREADY_EXISTS",
            "Payment already exists",
            "Account "
                + request.accountId()
                + " already has payment "
                + existing
                + " for merchant reference "
                + request.merchantReference()
                + ". Fetch it instead of paying again.");
    problem.setProperty("existingPaymentId", existing);
    return new ErrorResponseException(HttpStatus.CONFLICT, problem, null);
  }
}
