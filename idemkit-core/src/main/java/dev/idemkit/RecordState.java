package dev.idemkit;

/**
 * The life of an idempotency record. Expiry is not a state: a record is expired when the store's
 * clock has passed its {@code expiresAt}, whatever its state, except that a {@linkplain #isLive()
 * live} record never expires.
 */
public enum RecordState {
  /** An owner holds the lease and is running the operation. */
  IN_PROGRESS,
  /** Finished; the stored response is replayed to every retry. */
  COMPLETED,
  /** A deterministic business rejection (declined, not found); replayed like a completion. */
  FAILED_REPLAYABLE,
  /** Failed before any side effect; the next retry runs the operation again. */
  FAILED_RETRYABLE,
  /**
   * A downstream call's outcome is unknown; recovery must ask the far side before anything else.
   */
  UNKNOWN_REQUIRES_RECOVERY;

  /** Live records are never expired nor cleaned up: their work may not be finished. */
  public boolean isLive() {
    return this == IN_PROGRESS || this == UNKNOWN_REQUIRES_RECOVERY;
  }

  /** States whose stored response answers every retry. */
  public boolean isReplayable() {
    return this == COMPLETED || this == FAILED_REPLAYABLE;
  }
}
