package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.Problems;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.MissingPathVariableException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.UnsatisfiedServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.resource.NoResourceFoundException;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

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
                    err instanceof org.springframework.validation.FieldError f
                        ? f.getField() + " " + f.getDefaultMessage()
                        // Object-level messages (MoneyChecked) already start with the JSON field.
                        : err.getDefaultMessage())
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
    Throwable cause = e.getMostSpecificCause();
    if (cause instanceof UnrecognizedPropertyException unknown) {
      String parent = jsonPath(unknown.getPath().subList(0, unknown.getPath().size() - 1));
      return Problems.response(
          400,
          "UNKNOWN_FIELD",
          "Unknown field",
          "The body has a field this API version does not know: \""
              + unknown.getPropertyName()
              + "\""
              + (parent.isEmpty() ? "" : " in " + parent)
              + ". Remove it"
              + knownFields(unknown)
              + ".");
    }
    if (cause instanceof StreamReadException read
        && read.getOriginalMessage() != null
        && read.getOriginalMessage().startsWith("Duplicate ")) {
      // StrictJson: Jackson names the field in quotes ("Duplicate Object property \"amount\"").
      String message = read.getOriginalMessage();
      int open = message.indexOf('"');
      int close = message.lastIndexOf('"');
      String field = open >= 0 && close > open ? message.substring(open, close + 1) : "a field";
      return Problems.response(
          400,
          "DUPLICATE_FIELD",
          "Duplicate field",
          "The body has " + field + " more than once. Send each field once.");
    }
    if (cause instanceof MismatchedInputException mismatch) {
      if (mismatch.getPath().isEmpty()) {
        return Problems.response(
            400, "WRONG_TYPE", "Wrong type", "The body must be a JSON object.");
      }
      return Problems.response(
          400,
          "WRONG_TYPE",
          "Wrong type",
          jsonPath(mismatch.getPath())
              + " must be "
              + jsonType(mismatch.getTargetType())
              + (mismatch.getTargetType() == String.class
                  ? " (amounts too are strings: \"10.00\")"
                  : "")
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

  /** 405 with the {@code Allow} header HTTP requires: the methods the endpoint does take. */
  @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
  ResponseEntity<byte[]> method(HttpRequestMethodNotSupportedException e) {
    ResponseEntity.BodyBuilder answer =
        ResponseEntity.status(405).contentType(Problems.PROBLEM_JSON);
    if (e.getSupportedHttpMethods() != null) {
      answer.allow(e.getSupportedHttpMethods().toArray(HttpMethod[]::new));
    }
    return answer.body(
        Problems.body(
            405,
            "METHOD_NOT_ALLOWED",
            "Method not allowed",
            "Use " + e.getSupportedHttpMethods() + "."));
  }

  /**
   * Parameters Tomcat could not decode (bytes that are not UTF-8). The gate checks the query string
   * first ({@link QueryStrings}) and refuses form bodies (415), so no request should get here; if
   * one does, it is a 400, never a 500.
   */
  @ExceptionHandler(InvalidParameterException.class)
  ResponseEntity<byte[]> undecodableParameters(InvalidParameterException e) {
    return Problems.response(
        400,
        ApiGateFilter.INVALID_QUERY_PARAMETER,
        "Invalid query parameter",
        "The request's parameters are not percent-encoded UTF-8 text. "
            + ApiGateFilter.INVALID_QUERY_TEXT_DETAIL);
  }

  @ExceptionHandler(MethodArgumentTypeMismatchException.class)
  ResponseEntity<byte[]> badPath(MethodArgumentTypeMismatchException e) {
    if (e.getParameter().hasParameterAnnotation(RequestParam.class)) {
      Class<?> type = e.getRequiredType();
      return Problems.response(
          400,
          "INVALID_QUERY_PARAMETER",
          "Invalid query parameter",
          e.getName()
              + " must be "
              + (type == null
                  ? "of another form"
                  : type == int.class
                          || type == Integer.class
                          || type == long.class
                          || type == Long.class
                      ? "a whole number"
                      : "a " + type.getSimpleName())
              + ".");
    }
    return Problems.response(
        400,
        "INVALID_PATH_PARAMETER",
        "Invalid path parameter",
        e.getName() + " is not a valid id.");
  }

  @ExceptionHandler(MissingServletRequestParameterException.class)
  ResponseEntity<byte[]> missingQueryParameter(MissingServletRequestParameterException e) {
    return Problems.response(
        400,
        "MISSING_QUERY_PARAMETER",
        "Missing query parameter",
        "Add the query parameter " + e.getParameterName() + ".");
  }

  /**
   * A route that exists only with a query parameter ({@code params = "key"}) asked for without it:
   * the same mistake as a missing {@code @RequestParam}, and the same answer.
   */
  @ExceptionHandler(UnsatisfiedServletRequestParameterException.class)
  ResponseEntity<byte[]> unsatisfiedQueryParameter(UnsatisfiedServletRequestParameterException e) {
    String names =
        e.getParamConditionGroups().stream()
            .flatMap(java.util.Arrays::stream)
            .map(condition -> condition.startsWith("!") ? condition : condition.split("=", 2)[0])
            .filter(condition -> !condition.startsWith("!"))
            .distinct()
            .collect(java.util.stream.Collectors.joining(", "));
    return Problems.response(
        400,
        "MISSING_QUERY_PARAMETER",
        "Missing query parameter",
        "Add the query parameter " + names + ".");
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

  /**
   * Business errors (not found, conflicts) thrown outside an idempotent handler, with the headers
   * they carry ({@code Retry-After} of a tenant moving).
   */
  @ExceptionHandler(ErrorResponseException.class)
  ResponseEntity<byte[]> business(ErrorResponseException e) {
    log.debug("business error {}", e.getMessage());
    return ResponseEntity.status(e.getStatusCode())
        .headers(e.getHeaders())
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

  /** A JSON path as the caller wrote the body: {@code items[0].unitPrice}. */
  private static String jsonPath(List<JacksonException.Reference> path) {
    StringBuilder out = new StringBuilder();
    for (JacksonException.Reference ref : path) {
      if (ref.getPropertyName() != null) {
        if (!out.isEmpty()) {
          out.append('.');
        }
        out.append(ref.getPropertyName());
      } else if (ref.getIndex() >= 0) {
        out.append('[').append(ref.getIndex()).append(']');
      }
    }
    return out.toString();
  }

  private static String knownFields(UnrecognizedPropertyException unknown) {
    if (unknown.getKnownPropertyIds() == null || unknown.getKnownPropertyIds().isEmpty()) {
      return "";
    }
    return "; the fields here are "
        + unknown.getKnownPropertyIds().stream()
            .map(String::valueOf)
            .sorted()
            .collect(Collectors.joining(", "));
  }

  /** The JSON type a Java target type is read from. */
  private static String jsonType(Class<?> type) {
    if (type == null) {
      return "of another JSON type";
    }
    if (type == String.class || type.isEnum()) {
      return "a string";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
      return "a number";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "an array";
    }
    return "an object";
  }
}
