package dev.idemkit;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The first answer to an operation, kept so that every retry gets the same one.
 *
 * @param status the status (an HTTP status code for HTTP operations)
 * @param headers the headers to replay (for HTTP only safe ones such as {@code Content-Type} and
 *     {@code Location}; never cookies or credentials)
 * @param body the body bytes, replayed as they are; may be empty
 * @param schemaVersion the version of the body's schema, so a later release can tell an old body
 * @param resourceId a reference to what the operation created (e.g. a payment id), kept for
 *     diagnosis after the body is dropped; may be {@code null}
 */
public record StoredResponse(
    int status, Map<String, String> headers, byte[] body, int schemaVersion, String resourceId) {

  public StoredResponse {
    headers = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(headers)));
    body = Objects.requireNonNull(body, "body").clone();
  }

  public static StoredResponse of(int status, Map<String, String> headers, byte[] body) {
    return new StoredResponse(status, headers, body, 1, null);
  }

  public StoredResponse withResourceId(String id) {
    return new StoredResponse(status, headers, body, schemaVersion, id);
  }

  @Override
  public byte[] body() {
    return body.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredResponse r
        && status == r.status
        && schemaVersion == r.schemaVersion
        && headers.equals(r.headers)
        && Arrays.equals(body, r.body)
        && Objects.equals(resourceId, r.resourceId);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, headers, Arrays.hashCode(body), schemaVersion, resourceId);
  }

  @Override
  public String toString() {
    return "StoredResponse[status=" + status + ", bytes=" + body.length + "]";
  }
}
