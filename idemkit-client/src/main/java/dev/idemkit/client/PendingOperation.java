package dev.idemkit.client;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One intended operation as the {@link Journal} keeps it: everything needed to send it again
 * exactly as before (its key, method, path, body and its own headers) but not the credentials,
 * which come from the client that resumes it. Immutable.
 */
public final class PendingOperation {

  private final String operationId;
  private final String key;
  private final String method;
  private final String path;
  private final byte[] body;
  private final Map<String, String> headers;

  PendingOperation(
      String operationId,
      String key,
      String method,
      String path,
      byte[] body,
      Map<String, String> headers) {
    this.operationId = Objects.requireNonNull(operationId, "operationId");
    this.key = Keys.requireValid(key);
    this.method = Objects.requireNonNull(method, "method");
    this.path = Objects.requireNonNull(path, "path");
    this.body = body.clone();
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
  }

  /** The journal's id of this operation (not sent to the server). */
  public String operationId() {
    return operationId;
  }

  /** The idempotency key that every attempt carries, before and after a restart. */
  public String key() {
    return key;
  }

  /** The HTTP method, such as {@code POST}. */
  public String method() {
    return method;
  }

  /** The path, appended to the client's base URI. */
  public String path() {
    return path;
  }

  /** The request body (a copy). */
  public byte[] body() {
    return body.clone();
  }

  /** The body as UTF-8 text. */
  public String bodyAsString() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The request's own headers, such as {@code Content-Type}. */
  public Map<String, String> headers() {
    return headers;
  }

  byte[] bodyBytes() {
    return body;
  }

  @Override
  public String toString() {
    return "PendingOperation[" + operationId + " " + method + " " + path + ", key=" + key + "]";
  }
}
