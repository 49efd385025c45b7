package dev.idemkit.client;

import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The answer that ended an operation: a {@code 2xx} or {@code 3xx} from the server, possibly after
 * several attempts. Immutable.
 */
public final class IdempotentResponse {

  /** The header a server sets on an answer it replayed from its idempotency record. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  private final int status;
  private final HttpHeaders headers;
  private final byte[] body;
  private final String key;
  private final int attempts;

  IdempotentResponse(int status, HttpHeaders headers, byte[] body, String key, int attempts) {
    this.status = status;
    this.headers = headers;
    this.body = body.clone();
    this.key = key;
    this.attempts = attempts;
  }

  /** The HTTP status. */
  public int status() {
    return status;
  }

  /** All response headers. */
  public HttpHeaders headers() {
    return headers;
  }

  /**
   * The first value of a response header.
   *
   * @param name the header's name, in any case
   * @return its first value, if present
   */
  public Optional<String> header(String name) {
    return headers.firstValue(name);
  }

  /** The body's bytes (a copy). */
  public byte[] body() {
    return body.clone();
  }

  /** The body as UTF-8 text. */
  public String bodyAsString() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /**
   * Whether the server replayed a stored answer ({@code Idempotent-Replayed: true}): an earlier
   * attempt of this operation, whose answer this client never saw, had already done the work.
   */
  public boolean replayed() {
    return header(REPLAYED_HEADER).map(v -> v.trim().equalsIgnoreCase("true")).orElse(false);
  }

  /** How many HTTP attempts the operation took to get this answer, 1 if the first one did. */
  public int attempts() {
    return attempts;
  }

  /** The idempotency key every attempt of the operation carried. */
  public String key() {
    return key;
  }

  @Override
  public String toString() {
    return "IdempotentResponse[status="
        + status
        + ", replayed="
        + replayed()
        + ", attempts="
        + attempts
        + ", key="
        + key
        + "]";
  }
}
