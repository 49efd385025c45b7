package dev.idemkit.spring.boot;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.OperationResult;
import dev.idemkit.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;
import tools.jackson.databind.json.JsonMapper;

/**
 * Captures a handler's answer as the response to store: it runs the handler inside the engine's
 * transaction, serializes its answer once (the same bytes this request and every replay send), and
 * says which failure answers are stored for replay and which are given once and rolled back.
 */
final class ResponseCapture {

  /** Headers a stored answer keeps; never cookies or credentials. */
  private static final List<String> REPLAYED_HEADERS =
      List.of(HttpHeaders.CONTENT_TYPE, HttpHeaders.LOCATION);

  private final IdemkitProperties properties;
  private final JsonMapper mapper;

  ResponseCapture(IdemkitProperties properties, JsonMapper mapper) {
    this.properties = properties;
    this.mapper = mapper;
  }

  /** Runs the handler and turns its answer, or its business refusal, into a stored response. */
  OperationResult capture(MethodInvocation invocation, IdempotentHandler handler) throws Exception {
    Object result;
    try {
      result = invocation.proceed();
    } catch (Exception e) {
      if (e instanceof ErrorResponse error && replayed(handler, error.getStatusCode().value())) {
        HttpStatusCode status = error.getStatusCode();
        byte[] body = Problems.body(error.getBody());
        throw new BusinessRejectionException(
            "Rejected with " + status.value(),
            stored(status.value(), Problems.PROBLEM_JSON.toString(), null, body));
      }
      throw e;
    } catch (Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
    int status;
    HttpHeaders headers;
    Object body;
    if (result instanceof ResponseEntity<?> entity) {
      status = entity.getStatusCode().value();
      headers = entity.getHeaders();
      body = entity.getBody();
    } else {
      ResponseStatus annotated = handler.responseStatus();
      status = annotated == null ? 200 : annotated.code().value();
      headers = HttpHeaders.EMPTY;
      body = result;
    }
    byte[] bytes;
    if (body == null) {
      bytes = new byte[0];
    } else if (body instanceof byte[] raw) {
      bytes = raw;
    } else if (body instanceof String text) {
      bytes = text.getBytes(StandardCharsets.UTF_8);
    } else {
      bytes = mapper.writeValueAsBytes(body);
    }
    if (bytes.length > properties.getMaxStoredResponseBytes()) {
      throw new ResponseTooLargeException(bytes.length, properties.getMaxStoredResponseBytes());
    }
    MediaType type = headers.getContentType();
    String contentType =
        type != null ? type.toString() : body == null ? null : MediaType.APPLICATION_JSON_VALUE;
    StoredResponse response =
        withSchemaVersion(
            stored(status, contentType, headers.getFirst(HttpHeaders.LOCATION), bytes),
            handler.idempotent());
    if (status < 400) {
      return OperationResult.success(response);
    }
    if (!replayed(handler, status)) {
      // Not for replay (say a transient conflict): answered, but the transaction, claim
      // included, is rolled back, so a retry with the key runs again.
      throw new NotReplayedAnswer(toEntity(response, false));
    }
    return OperationResult.rejected(response);
  }

  /**
   * Whether a failure status is stored and replayed: the operation's own {@link
   * Idempotent#replayedStatuses()} when it names any, else {@code idemkit.replayable-statuses}.
   */
  private boolean replayed(IdempotentHandler handler, int status) {
    Idempotent idempotent = handler.idempotent();
    int[] own = idempotent == null ? new int[0] : idempotent.replayedStatuses();
    if (own.length == 0) {
      return properties.getReplayableStatuses().contains(status);
    }
    for (int s : own) {
      if (s == status) {
        return true;
      }
    }
    return false;
  }

  /** A failure answer the operation's replay policy does not store: given once, then forgotten. */
  static final class NotReplayedAnswer extends RuntimeException {
    private final transient ResponseEntity<byte[]> answer;

    ResponseEntity<byte[]> answer() {
      return answer;
    }

    NotReplayedAnswer(ResponseEntity<byte[]> answer) {
      super(
          "answered " + answer.getStatusCode().value() + ", not stored for replay",
          null,
          false,
          false);
      this.answer = answer;
    }
  }

  private static StoredResponse stored(
      int status, String contentType, String location, byte[] body) {
    Map<String, String> headers = new LinkedHashMap<>();
    if (contentType != null) {
      headers.put(HttpHeaders.CONTENT_TYPE, contentType);
    }
    if (location != null) {
      headers.put(HttpHeaders.LOCATION, location);
    }
    return StoredResponse.of(status, headers, body);
  }

  private static StoredResponse withSchemaVersion(StoredResponse r, Idempotent idempotent) {
    int version = idempotent == null ? 1 : idempotent.schemaVersion();
    return version == r.schemaVersion()
        ? r
        : new StoredResponse(r.status(), r.headers(), r.body(), version, r.resourceId());
  }

  /** A stored answer as sent: its status, the headers a replay keeps, its bytes. */
  static ResponseEntity<byte[]> toEntity(StoredResponse response, boolean replayed) {
    ResponseEntity.BodyBuilder builder = ResponseEntity.status(response.status());
    for (String name : REPLAYED_HEADERS) {
      String value = response.headers().get(name);
      if (value != null) {
        builder.header(name, value);
      }
    }
    if (replayed) {
      builder.header(IdempotentMethodInterceptor.REPLAYED_HEADER, "true");
    }
    return builder.body(response.body());
  }

  /** The answer is larger than {@code idemkit.max-stored-response-bytes}. */
  static final class ResponseTooLargeException extends RuntimeException {
    ResponseTooLargeException(int size, int limit) {
      super(
          "response of "
              + size
              + " bytes exceeds idemkit.max-stored-response-bytes="
              + limit
              + "; rolled back");
    }
  }
}
