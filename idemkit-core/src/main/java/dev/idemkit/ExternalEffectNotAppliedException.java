package dev.idemkit;

/**
 * Thrown by an external call that knows for certain nothing happened on the far side (a refused
 * connection, a 5xx the provider documents as "nothing charged"). The record becomes {@link
 * RecordState#FAILED_RETRYABLE} and the next retry calls again. Any other exception from an
 * external call leaves the outcome unknown.
 */
public class ExternalEffectNotAppliedException extends RuntimeException {

  public ExternalEffectNotAppliedException(String message, Throwable cause) {
    super(message, cause);
  }

  public ExternalEffectNotAppliedException(String message) {
    super(message);
  }
}
