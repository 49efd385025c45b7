package dev.idemkit.examples.payments.payments;

import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.spring.boot.Idempotent;
import dev.idemkit.spring.boot.IdempotentPhases;
import jakarta.validation.Valid;
import java.security.Principal;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** Payments. Creating one is idempotent: a retry with the same key pays (and charges) once. */
@RestController
public class PaymentsController {

  private final PaymentRepository payments;
  private final PaymentFlow flow;

  public PaymentsController(PaymentRepository payments, PaymentFlow flow) {
    this.payments = payments;
    this.flow = flow;
  }

  /**
   * Creates and charges a payment, in atomic phases around the provider call. {@code
   * X-Provider-Fault} reaches the provider simulator in demo mode only, so anyone can watch a
   * failure being survived; with a real provider it is ignored.
   */
  @PostMapping(path = "/v1/payments", consumes = "application/json")
  @Idempotent(operation = PaymentFlow.OPERATION, ttl = "PT24H", phased = true)
  public ResponseEntity<?> create(
      Principal tenant,
      @Valid @RequestBody CreatePaymentRequest request,
      @RequestHeader(name = "X-Provider-Fault", required = false) String providerFault) {
    return IdempotentPhases.run(flow.newPayment(tenant.getName(), request, providerFault));
  }

  @GetMapping("/v1/payments/{paymentId}")
  public PaymentResponse get(Principal tenant, @PathVariable UUID paymentId) {
    return payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
  }
}
