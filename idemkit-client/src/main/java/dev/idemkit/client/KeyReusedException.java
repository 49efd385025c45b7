package dev.idemkit.client;

/**
 * The server already holds this key for a <em>different</em> request ({@code
 * IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST}, 422, or 409 where so configured). The key was
 * reused for another operation, or the request changed between retries: use a new key for a new
 * operation, and retry an operation only with exactly the same request.
 */
public final class KeyReusedException extends RequestRejectedException {

  private static final long serialVersionUID = 1L;

  /** The server's error code for this refusal. */
  public static final String ERROR_CODE = "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST";

  KeyReusedException(IdempotentResponse response, String detail) {
    super(response, ERROR_CODE, detail);
  }
}
