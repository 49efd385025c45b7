package dev.idemkit.spi;

/** Why an existing record changes hands; each is one conditional write in a store. */
public enum Takeover {
  /** The record is past its window and not live: it is replaced by a new operation. */
  REPLACE_EXPIRED,
  /** {@code FAILED_RETRYABLE}: run again from its recovery point. */
  RECLAIM_RETRYABLE,
  /** {@code IN_PROGRESS} whose lease ran out (the owner died): resume from the recovery point. */
  RESUME_ABANDONED,
  /** {@code UNKNOWN_REQUIRES_RECOVERY} whose lease ran out: recover the unknown outcome. */
  RECOVER_UNKNOWN
}
