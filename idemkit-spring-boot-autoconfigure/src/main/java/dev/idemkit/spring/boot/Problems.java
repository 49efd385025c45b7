package dev.idemkit.spring.boot;

import dev.idemkit.internal.CanonicalJson;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * RFC 9457 problem bodies with a stable machine-readable {@code errorCode} and a sentence that says
 * what to do. Idemkit writes them itself, byte for byte, so they can be stored and replayed.
 */
public final class Problems {

  /** The problem media type. */
  public static final MediaType PROBLEM_JSON = MediaType.APPLICATION_PROBLEM_JSON;

  private Problems() {}

  /** The {@code type} URI of an error code. */
  public static URI type(String errorCode) {
    return URI.create(
        "urn:problem-type:idemkit:" + errorCode.toLowerCase(Locale.ROOT).replace('_', '-'));
  }

  public static byte[] body(int status, String errorCode, String title, String detail) {
    Map<String, Object> problem = new LinkedHashMap<>();
    problem.put("type", type(errorCode).toString());
    problem.put("title", title);
    problem.put("status", status);
    problem.put("detail", detail);
    problem.put("errorCode", errorCode);
    return CanonicalJson.canonicalBytes(problem);
  }

  /** The bytes of a Spring {@link ProblemDetail}, its extra properties at the top level. */
  public static byte[] body(ProblemDetail detail) {
    Map<String, Object> problem = new LinkedHashMap<>();
    problem.put("type", detail.getType().toString());
    if (detail.getTitle() != null) {
      problem.put("title", detail.getTitle());
    }
    problem.put("status", detail.getStatus());
    if (detail.getDetail() != null) {
      problem.put("detail", detail.getDetail());
    }
    if (detail.getInstance() != null) {
      problem.put("instance", detail.getInstance().toString());
    }
    if (detail.getProperties() != null) {
      detail
          .getProperties()
          .forEach(
              (k, v) ->
                  problem.put(
                      k,
                      v == null || v instanceof Number || v instanceof Boolean ? v : v.toString()));
    }
    return CanonicalJson.canonicalBytes(problem);
  }

  /** A problem answer with one of the layer's own {@link ErrorCode}s. */
  public static ResponseEntity<byte[]> response(
      int status, ErrorCode errorCode, String title, String detail) {
    return response(status, errorCode.code(), title, detail);
  }

  /** {@link #response(int, ErrorCode, String, String)} with a {@code Retry-After} header. */
  public static ResponseEntity<byte[]> response(
      int status, ErrorCode errorCode, String title, String detail, Duration retryAfter) {
    return response(status, errorCode.code(), title, detail, retryAfter);
  }

  public static ResponseEntity<byte[]> response(
      int status, String errorCode, String title, String detail) {
    return ResponseEntity.status(status)
        .contentType(PROBLEM_JSON)
        .body(body(status, errorCode, title, detail));
  }

  public static ResponseEntity<byte[]> response(
      int status, String errorCode, String title, String detail, Duration retryAfter) {
    return ResponseEntity.status(status)
        .contentType(PROBLEM_JSON)
        .header(HttpHeaders.RETRY_AFTER, String.valueOf(Math.max(1, retryAfter.toSeconds())))
        .body(body(status, errorCode, title, detail));
  }
}
