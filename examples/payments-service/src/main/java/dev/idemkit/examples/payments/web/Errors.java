package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.Problems;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * Errors as RFC 9457 problems with a stable errorCode: the shape every domain's refusals share. A
 * refusal that belongs to one domain is built in that domain (e.g. {@code payments.PaymentErrors})
 * from {@link #problem}.
 */
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
