package dev.idemkit.examples.payments.payments;

import dev.idemkit.PhasedOperation;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.examples.payments.web.InputText;
import dev.idemkit.examples.payments.web.ProblemAnswer;
import dev.idemkit.spring.boot.Idempotent;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import java.security.Principal;
import java.util.List;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Payments. Creating one is idempotent: a retry with the same key pays (and charges) once. */
@RestController
@Tag(name = "payments")
public class PaymentsController {

  private final PaymentRepository payments;
  private final PaymentFlow flow;

  public PaymentsController(PaymentRepository payments, PaymentFlow flow) {
    this.payments = payments;
    this.flow = flow;
  }

  /** Creates and charges a payment, in atomic phases around the provider call. */
  @PostMapping(path = "/v1/payments", consumes = "application/json")
  @Idempotent(operation = PaymentFlow.OPERATION, ttl = "PT24H", phased = true)
  @Operation(operationId = "createPayment", summary = "Create and charge a payment")
  @ApiResponse(
      responseCode = "201",
      description = "The payment, charged",
      content = @Content(schema = @Schema(implementation = PaymentResponse.class)))
  @ProblemAnswer(status = 402, errorCodes = "PAYMENT_DECLINED")
  @ProblemAnswer(
      status = 409,
      errorCodes = {"PAYMENT_ALREADY_EXISTS", "PAYMENT_ABANDONED"})
  public PhasedOperation<PaymentFlow.Progress> create(
      Principal tenant, @Valid @RequestBody CreatePaymentRequest request) {
    return flow.newPayment(tenant.getName(), request);
  }

  /**
   * Your payments with a merchant reference: the way to find out whether a payment whose answer
   * never arrived was made (and to reconcile with your own records), without its id.
   */
  @GetMapping("/v1/payments")
  @Operation(
      operationId = "listPayments",
      summary = "Your payments with a merchant reference",
      description =
          "Oldest first: at most one that is not FAILED per account (a merchant reference is"
              + " unique per account), after any FAILED attempts. Empty if there is none.")
  @ApiResponse(
      responseCode = "200",
      description = "The payments, possibly none",
      content =
          @Content(array = @ArraySchema(schema = @Schema(implementation = PaymentResponse.class))))
  public List<PaymentResponse> list(
      Principal tenant,
      @Parameter(description = "The merchant reference the payments were created with")
          @RequestParam
          String merchantReference,
      @Parameter(description = "Only this account's payments") @RequestParam(required = false)
          String accountId) {
    return payments.findByReference(
        tenant.getName(),
        InputText.queryReference("merchantReference", merchantReference),
        accountId);
  }

  @GetMapping("/v1/payments/{paymentId}")
  @Operation(operationId = "getPayment", summary = "A payment of yours")
  @ProblemAnswer(status = 404, errorCodes = "PAYMENT_NOT_FOUND")
  public PaymentResponse get(Principal tenant, @PathVariable UUID paymentId) {
    return payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
  }
}
