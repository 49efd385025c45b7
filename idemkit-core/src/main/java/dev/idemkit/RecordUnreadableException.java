package dev.idemkit;

/**
 * A record's stored answer (or recovery data) cannot be read: its tenant's data key was destroyed
 * (crypto-shredding), a master key is missing, the ciphertext does not authenticate, or a
 * referenced resource is gone. Never answered with garbage, and never a reason to run the operation
 * again: the caller gets a clear error with code {@link #ERROR_CODE}.
 */
public class RecordUnreadableException extends RuntimeException {

  /** The stable error code. */
  public static final String ERROR_CODE = "IDEMPOTENCY_RECORD_UNREADABLE";

  /** Why. */
  public enum Reason {
    /** The tenant's data key was destroyed on purpose: the answer is gone for good. */
    KEY_DESTROYED,
    /** A key is not available to this process (master key missing from configuration, KMS). */
    KEY_UNAVAILABLE,
    /** The stored bytes do not authenticate: altered, or moved from another record. */
    TAMPERED,
    /** Replayed by reference, and the resource no longer exists. */
    REFERENCE_GONE
  }

  private final transient ScopedKey id;
  private final Reason reason;

  public RecordUnreadableException(ScopedKey id, Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.id = id;
    this.reason = reason;
  }

  public ScopedKey id() {
    return id;
  }

  public Reason reason() {
    return reason;
  }

  /** Gone on purpose (410), rather than broken (500). */
  public boolean isGone() {
    return reason == Reason.KEY_DESTROYED || reason == Reason.REFERENCE_GONE;
  }
}
