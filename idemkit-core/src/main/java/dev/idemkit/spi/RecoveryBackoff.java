package dev.idemkit.spi;

/**
 * What {@link RecoveryAdministration#backOffRecovery} did to a record whose outcome is still
 * unknown.
 */
public enum RecoveryBackoff {
  /** The next recovery attempt waits: the record is due again after the delay. */
  DEFERRED,
  /** Its attempts reached the limit: recovery stops and the record waits for an operator. */
  ESCALATED,
  /** It was already waiting for an operator. */
  ALREADY_ESCALATED,
  /** The record is not waiting for a recovery (finished, taken over, or gone): nothing changed. */
  NOT_PENDING
}
