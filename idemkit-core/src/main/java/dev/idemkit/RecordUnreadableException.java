package dev.idemkit;

import java.util.Optional;

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
  private final transient Fingerprint recorded;

  public RecordUnreadableException(ScopedKey id, Reason reason, String message, Throwable cause) {
    this(id, reason, message, cause, null);
  }

  private RecordUnreadableException(
      ScopedKey id, Reason reason, String message, Throwable cause, Fingerprint recorded) {
    super(message, cause);
    this.id = id;
    this.reason = reason;
    this.recorded = recorded;
  }

  /**
   * The same failure, naming the fingerprint the unreadable record was made with (it is stored in
   * the clear): a request with a different command is then a mismatch, as it would be for a record
   * that reads, and not this error (contract §2: a different fingerprint, in any state).
   */
  public RecordUnreadableException withRecordedFingerprint(Fingerprint fingerprint) {
    RecordUnreadableException e =
        new RecordUnreadableException(id, reason, getMessage(), getCause(), fingerprint);
    e.setStackTrace(getStackTrace());
    return e;
  }

  /** The fingerprint of the record that could not be read, when the store knows it. */
  public Optional<Fingerprint> recordedFingerprint() {
    return Optional.ofNullable(recorded);
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
