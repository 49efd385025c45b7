package dev.idemkit.client;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * An operation that did not end in a {@code 2xx}/{@code 3xx}. The subtypes say whether it is worth
 * trying again: a {@link RequestRejectedException} will be refused again as it is; after a {@link
 * RetriesExhaustedException} or an {@link OperationInterruptedException} the outcome is unknown,
 * and the operation must be retried <em>with the same key</em> (which {@link
 * IdempotentClient#resume(PendingOperation)} does from the journal).
 */
public abstract sealed class IdempotencyClientException extends RuntimeException
    permits RequestRejectedException, RetriesExhaustedException, OperationInterruptedException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final int attempts;
  private final int status;
  private final String errorCode;
  private final String detail;

  IdempotencyClientException(
      String message,
      Throwable cause,
      String key,
      int attempts,
      int status,
      String errorCode,
      String detail) {
    super(message, cause);
    this.key = key;
    this.attempts = attempts;
    this.status = status;
    this.errorCode = errorCode;
    this.detail = detail;
  }

  /**
   * The operation's idempotency key; empty only when the failure came before there was one (a
   * server-issued key could not be obtained).
   */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** HTTP attempts made. */
  public int attempts() {
    return attempts;
  }

  /** The HTTP status of the last answer; empty if the last attempt got none (I/O, timeout). */
  public OptionalInt status() {
    return status > 0 ? OptionalInt.of(status) : OptionalInt.empty();
  }

  /**
   * The server's machine-readable {@code errorCode} from the last answer's problem body (RFC 9457),
   * such as {@code IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST}.
   */
  public Optional<String> errorCode() {
    return Optional.ofNullable(errorCode);
  }

  /** The problem body's {@code detail}: the server's sentence on what to do. */
  public Optional<String> detail() {
    return Optional.ofNullable(detail);
  }
}
