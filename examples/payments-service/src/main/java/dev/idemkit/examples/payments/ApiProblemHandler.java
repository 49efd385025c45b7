package dev.idemkit.examples.payments;

import dev.idemkit.spring.boot.Problems;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.MissingPathVariableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Every error the API gives is {@code application/problem+json} with a stable {@code errorCode} and
 * a sentence that says what to do. Client errors are logged at DEBUG, never at ERROR.
 */
@RestControllerAdvice
public class ApiProblemHandler {

  private static final Logger log = LoggerFactory.getLogger(ApiProblemHandler.class);

  @ExceptionHandler(MethodArgumentNotValidException.class)
  ResponseEntity<byte[]> invalid(MethodArgumentNotValidException e) {
    String fields =
        e.getBindingResult().getAllErrors().stream()
            .map(
                err ->
                    (err instanceof org.springframework.validation.FieldError f
                            ? f.getField()
                            : err.getObjectName())
                        + " "
                        + err.getDefaultMessage())
            .sorted()
            .collect(Collectors.joining("; "));
    return Problems.response(
        400,
        "VALIDATION_FAILED",
        "Request invalid",
        "Fix the request and send it again: " + fields + ".");
  }

  @ExceptionHandler(HttpMessageNotReadableException.class)
  ResponseEntity<byte[]> unreadable(HttpMessageNotReadableException e) {
    if (hasCause(e, ApiGateFilter.BodyTooLargeException.class)) {
      return Problems.response(
          413,
          "PAYLOAD_TOO_LARGE",
          "Request body too large",
          causeMessage(e, ApiGateFilter.BodyTooLargeException.class));
    }
    String name = e.getMostSpecificCause().getClass().getSimpleName();
    if (name.contains("UnrecognizedProperty")) {
      return Problems.response(
          400,
          "UNKNOWN_FIELD",
          "Unknown field",
          "The body has a field this API version does not know: "
              + firstLine(e.getMostSpecificCause().getMessage())
              + ". Remove it.");
    }
    if (name.contains("MismatchedInput")
        || name.contains("InvalidFormat")
        || name.contains("InvalidType")) {
      return Problems.response(
          400,
          "WRONG_TYPE",
          "Wrong type",
          "A field has the wrong JSON type: "
              + firstLine(e.getMostSpecificCause().getMessage())
              + ".");
    }
    return Problems.response(
        400,
        "INVALID_JSON",
        "Body is not valid JSON",
        "Send a JSON object as the body, with Content-Type: application/json.");
  }

  @ExceptionHandler(HttpMediaTypeNotSupportedException.class)
  ResponseEntity<byte[]> mediaType(HttpMediaTypeNotSupportedException e) {
    return Problems.response(
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        "Unsupported media type",
        "Send Content-Type: application/json.");
  }

  @ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
  ResponseEntity<byte[]> notAcceptable(HttpMediaTypeNotAcceptableException e) {
    return Problems.response(
        406, "NOT_ACCEPTABLE", "Not acceptable", "This API answers application/json.");
  }

  @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
  ResponseEntity<byte[]> method(HttpRequestMethodNotSupportedException e) {
    return Problems.response(
        405,
        "METHOD_NOT_ALLOWED",
        "Method not allowed",
        "Use " + e.getSupportedHttpMethods() + ".");
  }

  @ExceptionHandler(MethodArgumentTypeMismatchException.class)
  ResponseEntity<byte[]> badPath(MethodArgumentTypeMismatchException e) {
    return Problems.response(
        400,
        "INVALID_PATH_PARAMETER",
        "Invalid path parameter",
        e.getName() + " is not a valid id.");
  }

  /**
   * A path variable that converts to nothing ({@code /v1/payments/%20}: blank, so no id) is the
   * client's mistake, not ours.
   */
  @ExceptionHandler(MissingPathVariableException.class)
  ResponseEntity<byte[]> blankPathVariable(MissingPathVariableException e) {
    if (!e.isMissingAfterConversion()) {
      return unexpected(e);
    }
    return Problems.response(
        400,
        "INVALID_PATH_PARAMETER",
        "Invalid path parameter",
        e.getVariableName() + " is not a valid id.");
  }

  @ExceptionHandler(NoResourceFoundException.class)
  ResponseEntity<byte[]> noRoute(NoResourceFoundException e) {
    return Problems.response(404, "NOT_FOUND", "Not found", "No such endpoint.");
  }

  /** Business errors (not found, conflicts) thrown outside an idempotent handler. */
  @ExceptionHandler(ErrorResponseException.class)
  ResponseEntity<byte[]> business(ErrorResponseException e) {
    log.debug("business error {}", e.getMessage());
    return ResponseEntity.status(e.getStatusCode())
        .contentType(Problems.PROBLEM_JSON)
        .body(Problems.body(e.getBody()));
  }

  /** Anything else is a bug of ours: logged at ERROR, answered without internals. */
  @ExceptionHandler(Exception.class)
  ResponseEntity<byte[]> unexpected(Exception e) {
    log.error("Unexpected failure", e);
    return Problems.response(
        500,
        "INTERNAL_ERROR",
        "Internal error",
        "Something failed on our side. Retry with the same Idempotency-Key: nothing happens twice.");
  }

  private static boolean hasCause(Throwable t, Class<?> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  private static String causeMessage(Throwable t, Class<?> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return c.getMessage();
      }
    }
    return "";
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    String line = nl < 0 ? message : message.substring(0, nl);
    return line.length() > 200 ? line.substring(0, 200) : line;
  }
}
