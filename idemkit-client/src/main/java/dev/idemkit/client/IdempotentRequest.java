package dev.idemkit.client;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * One intended operation, being described: body, headers, and where its key comes from. {@link
 * #send()} fixes the key, journals the operation if the client has a journal, and runs it with
 * retries. One instance is one operation, sent once; not thread-safe.
 */
public final class IdempotentRequest {

  /** Headers {@code java.net.http} sets itself and refuses from callers. */
  private static final Set<String> TRANSPORT_HEADERS =
      Set.of("connection", "content-length", "expect", "host", "upgrade");

  private final DefaultIdempotentClient client;
  private final String method;
  private final String path;
  private final Map<String, String> headers = new LinkedHashMap<>();
  private byte[] body = new byte[0];
  private String key;
  private String issuedFor;
  private boolean sent;

  IdempotentRequest(DefaultIdempotentClient client, String method, String path) {
    this.client = client;
    this.method = method;
    this.path = path;
  }

  /**
   * Sends this JSON text as the body, with {@code Content-Type: application/json}.
   *
   * @param json the body
   * @return this operation
   */
  public IdempotentRequest json(String json) {
    return body(json.getBytes(StandardCharsets.UTF_8), "application/json");
  }

  /**
   * Sends these bytes as the body.
   *
   * @param body the body
   * @param contentType its media type
   * @return this operation
   */
  public IdempotentRequest body(byte[] body, String contentType) {
    this.body = Objects.requireNonNull(body, "body").clone();
    return header("Content-Type", contentType);
  }

  /**
   * Sends a header on every attempt, such as {@code Api-Version}. Headers are journaled with the
   * operation, so do not put secrets here: the {@link IdempotentClient.Builder#bearerToken(String)
   * bearer token} is sent separately and never journaled.
   *
   * @param name the header's name
   * @param value its value
   * @return this operation
   * @throws IllegalArgumentException for {@code Idempotency-Key} (use {@link #key(String)}), or a
   *     name or value with characters a header cannot carry
   */
  public IdempotentRequest header(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (name.equalsIgnoreCase(IdempotentClient.KEY_HEADER)) {
      throw new IllegalArgumentException("set the key with key(...), not as a header");
    }
    if (TRANSPORT_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException(name + " is set by the HTTP client, not by the caller");
    }
    if (name.isEmpty() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7F && c != ':')) {
      throw new IllegalArgumentException("not a header name: '" + name + "'");
    }
    if (!value.chars().allMatch(c -> c == '\t' || (c >= 0x20 && c != 0x7F))) {
      throw new IllegalArgumentException("header " + name + " has a control character");
    }
    headers.keySet().removeIf(n -> n.equalsIgnoreCase(name));
    headers.put(name, value);
    return this;
  }

  /**
   * Uses the caller's key, e.g. one derived from a durable id of the intended operation (an order
   * id), instead of a random one.
   *
   * @param key 1–255 visible ASCII characters
   * @return this operation
   * @throws IllegalArgumentException if the key breaks those rules
   */
  public IdempotentRequest key(String key) {
    requireNoKeyChosen();
    this.key = Keys.requireValid(key);
    return this;
  }

  /**
   * Gets the key from the server before the first attempt ({@link
   * IdempotentClient#issueKey(String)}), for operations in the server's strict mode that accept
   * only keys it issued.
   *
   * @param operation the server's operation name, such as {@code create_payment}
   * @return this operation
   */
  public IdempotentRequest issuedKey(String operation) {
    requireNoKeyChosen();
    this.issuedFor = Objects.requireNonNull(operation, "operation");
    return this;
  }

  /**
   * Runs the operation: fixes its key (the caller's, a server-issued one, or a random UUID), writes
   * it to the journal if there is one, then sends it, retrying with that same key as the {@link
   * RetryPolicy} allows.
   *
   * @return the {@code 2xx}/{@code 3xx} answer
   * @throws KeyReusedException if the server holds the key for a different request
   * @throws RequestRejectedException for any other {@code 4xx} that is not retried
   * @throws RetriesExhaustedException if attempts or the deadline ran out (outcome unknown)
   * @throws OperationInterruptedException if the thread was interrupted (outcome unknown)
   * @throws IllegalStateException if this operation was already sent
   */
  public IdempotentResponse send() {
    if (sent) {
      throw new IllegalStateException(
          "this operation was already sent; one IdempotentRequest is one operation. To try it"
              + " again, resume it from the journal or send a new request with the same key(...)");
    }
    sent = true;
    String chosen =
        key != null ? key : issuedFor != null ? client.issueKey(issuedFor) : Keys.random();
    PendingOperation operation =
        new PendingOperation(
            UUID.randomUUID().toString(),
            chosen,
            method.toUpperCase(Locale.ROOT),
            path,
            body,
            headers);
    return client.run(operation, true);
  }

  private void requireNoKeyChosen() {
    if (key != null || issuedFor != null) {
      throw new IllegalStateException("the key was already chosen for this operation");
    }
  }
}
