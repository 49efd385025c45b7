package dev.idemkit.client;

import java.util.Optional;

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
  private final transient IdempotentResponse lastResponse;

  RetriesExhaustedException(
      String message,
      Throwable lastFailure,
      Reason reason,
      String key,
      int attempts,
      IdempotentResponse lastResponse,
      String lastErrorCode,
      String lastDetail) {
    super(
        message,
        lastFailure,
        key,
        attempts,
        lastResponse == null ? 0 : lastResponse.status(),
        lastErrorCode,
        lastDetail);
    this.reason = reason;
    this.lastResponse = lastResponse;
  }

  /** Why retrying stopped. */
  public Reason reason() {
    return reason;
  }

  /**
   * The last answer as received (status, headers such as {@code Retry-After}, body); empty if the
   * last attempt got none (I/O error, timeout), or after deserialization.
   */
  public Optional<IdempotentResponse> lastResponse() {
    return Optional.ofNullable(lastResponse);
  }
}
