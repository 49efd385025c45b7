package dev.idemkit.client;

/**
 * Every attempt allowed by the {@link RetryPolicy} failed in a retryable way (I/O error, timeout,
 * {@code 5xx}, {@code 429}, "in progress"), or the deadline came first. <strong>The outcome is
 * unknown</strong>: an attempt may have been executed and its answer lost. Retry later with the
 * <em>same</em> key, never a new one; with a journal the operation stays pending for {@link
 * IdempotentClient#resume(PendingOperation)}.
 */
public final class RetriesExhaustedException extends IdempotencyClientException {

  private static final long serialVersionUID = 1L;

  /** Why retrying stopped. */
  public enum Reason {
    /** {@link RetryPolicy#maxAttempts()} attempts were made. */
    MAX_ATTEMPTS,
    /** The next attempt would have started after {@link RetryPolicy#deadline()}. */
    DEADLINE
  }

  private final Reason reason;

  RetriesExhaustedException(
      String message,
      Throwable lastFailure,
      Reason reason,
      String key,
      int attempts,
      int lastStatus,
      String lastErrorCode,
      String lastDetail) {
    super(message, lastFailure, key, attempts, lastStatus, lastErrorCode, lastDetail);
    this.reason = reason;
  }

  /** Why retrying stopped. */
  public Reason reason() {
    return reason;
  }
}
