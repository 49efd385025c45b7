package dev.idemkit.client;

/**
 * The calling thread was interrupted during an attempt or a wait; the thread's interrupt flag is
 * set again. As after {@link RetriesExhaustedException}, the outcome is unknown: retry with the
 * same key (a journaled operation stays pending).
 */
public final class OperationInterruptedException extends IdempotencyClientException {

  private static final long serialVersionUID = 1L;

  OperationInterruptedException(String key, int attempts, InterruptedException cause) {
    super(
        "interrupted after "
            + attempts
            + " attempt(s)"
            + (key == null ? "" : " of key " + key)
            + "; the outcome is unknown: retry with the same key",
        cause,
        key,
        attempts,
        0,
        null,
        null);
  }
}
