package dev.idemkit.examples.payments;

import dev.idemkit.spring.boot.Idempotent;
import jakarta.validation.Valid;
import java.net.URI;
import java.security.Principal;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Payments. Creating one is idempotent: a retry with the same key pays once. */
@RestController
public class PaymentsController {

  private final PaymentRepository payments;

  public PaymentsController(PaymentRepository payments) {
    this.payments = payments;
  }

  @PostMapping(path = "/v1/payments", consumes = "application/json")
  @Idempotent(operation = "create_payment", ttl = "PT24H")
  public ResponseEntity<PaymentResponse> create(
      Principal tenant, @Valid @RequestBody CreatePaymentRequest request) {
    PaymentResponse payment =
        payments
            .create(tenant.getName(), request)
            .orElseThrow(() -> alreadyExists(tenant.getName(), request));
    return ResponseEntity.created(URI.create("/v1/payments/" + payment.paymentId())).body(payment);
  }

  @GetMapping("/v1/payments/{paymentId}")
  public PaymentResponse get(Principal tenant, @PathVariable UUID paymentId) {
    return payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
  }

  /** The business key caught a second payment for one merchant reference under another key. */
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
