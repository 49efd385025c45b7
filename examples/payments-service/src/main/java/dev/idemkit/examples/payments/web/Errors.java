package dev.idemkit.examples.payments.web;

import dev.idemkit.examples.payments.payments.CreatePaymentRequest;
import dev.idemkit.spring.boot.Problems;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/** Business errors as RFC 9457 problems with a stable errorCode. */
public final class Errors {

  private Errors() {}

  public static ProblemDetail problem(
      HttpStatus status, String errorCode, String title, String detail) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
    problem.setType(Problems.type(errorCode));
    problem.setTitle(title);
    problem.setProperty("errorCode", errorCode);
    return problem;
  }

  /** The provider declined the payment: nothing was charged. */
  public static ProblemDetail paymentDeclined(UUID paymentId) {
    ProblemDetail problem =
        problem(
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
        problem(
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

  public static ErrorResponseException notFound(String errorCode, String detail) {
    return new ErrorResponseException(
        HttpStatus.NOT_FOUND, problem(HttpStatus.NOT_FOUND, errorCode, "Not found", detail), null);
  }

  public static ErrorResponseException forbidden(String detail) {
    return new ErrorResponseException(
        HttpStatus.FORBIDDEN,
        problem(HttpStatus.FORBIDDEN, "FORBIDDEN", "Forbidden", detail),
        null);
  }

  public static ErrorResponseException badRequest(String errorCode, String title, String detail) {
    return new ErrorResponseException(
        HttpStatus.BAD_REQUEST, problem(HttpStatus.BAD_REQUEST, errorCode, title, detail), null);
  }

  public static ErrorResponseException unprocessable(
      String errorCode, String title, String detail) {
    return new ErrorResponseException(
        HttpStatus.UNPROCESSABLE_CONTENT,
        problem(HttpStatus.UNPROCESSABLE_CONTENT, errorCode, title, detail),
        null);
  }
}
