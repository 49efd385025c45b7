package dev.idemkit;

/**
 * Thrown when an idempotency key, or the {@code Idempotency-Key} header that carries it, is
 * malformed. The message says exactly what is wrong and is safe to return to the client: it
 * describes offending characters by position and code point instead of echoing the raw value.
 */
public final class InvalidIdempotencyKeyException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** The stable, machine-readable code of this error, for API error bodies. */
  public static final String ERROR_CODE = "IDEMPOTENCY_KEY_INVALID";

  /**
   * Creates the exception.
   *
   * @param message what is wrong with the key
   */
  public InvalidIdempotencyKeyException(String message) {
    super(message);
  }

  /**
   * Returns the machine-readable error code.
   *
   * @return {@value #ERROR_CODE}
   */
  public String errorCode() {
    return ERROR_CODE;
  }
}
