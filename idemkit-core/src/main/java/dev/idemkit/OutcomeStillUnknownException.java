package dev.idemkit;

/**
 * Thrown by an external phase's recovery when the far side still cannot tell what happened (its
 * lookups are down). The record stays {@link RecordState#UNKNOWN_REQUIRES_RECOVERY}.
 */
public class OutcomeStillUnknownException extends RuntimeException {

  public OutcomeStillUnknownException(String message, Throwable cause) {
    super(message, cause);
  }

  public OutcomeStillUnknownException(String message) {
    super(message);
  }
}
