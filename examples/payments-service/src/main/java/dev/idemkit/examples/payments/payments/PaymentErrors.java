package dev.idemkit.examples.payments.payments;

import dev.idemkit.examples.payments.web.Errors;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/** The payment domain's refusals, as problems with a stable errorCode. */
public final class PaymentErrors {

  private PaymentErrors() {}

  /** The provider declined the payment: nothing was charged. */
  public static ProblemDetail paymentDeclined(UUID paymentId) {
    ProblemDetail problem =
        Errors.problem(
            HttpStatus.PAYMENT_REQUIRED,
            "PAYMENT_DECLINED",
            "Payment declined",
            "The provider declined payment "
                + paymentId
                + ". Nothing was charged. To try again (after the payer fixed the cause), send"
                + " the payment with a new key: a declined payment does not hold its merchant"
                + " reference.");
    problem.setProperty("paymentId", paymentId.toString());
    return problem;
  }

  /**
   * The business key caught a second payment for one merchant reference under another key: the
   * answer names the payment that exists.
   */
  public static ProblemDetail paymentAlreadyExists(
      String existingId, CreatePaymentRequest request) {
    ProblemDetail problem =
        Errors.problem(
            HttpStatus.CONFLICT,
            "PAYMENT_ALREADY_EXISTS",
            "Payment already exists",
            "Account "
                + request.accountId()
                + " already has payment "
                + existingId
                + " for merchant reference "
                + request.merchantReference()
                + ". Fetch it (GET /v1/payments/"
                + existingId
                + ") instead of paying again; while it waits for the provider, retry the request"
                + " with the key that created it.");
    problem.setProperty("existingPaymentId", existingId);
    return problem;
  }
}
