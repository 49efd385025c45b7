package dev.idemkit;

/**
 * An operation failed with an unexpected error. {@link #recordState()} says what the record was
 * left as: {@link RecordState#FAILED_RETRYABLE} (or no record at all for a single-transaction
 * operation) when nothing outside happened, so a retry runs again; {@link RecordState#IN_PROGRESS}
 * with its lease released when an external effect is recorded, so a retry resumes from the recovery
 * point.
 */
public class OperationFailedException extends RuntimeException {

  private final RecordState recordState;

  public OperationFailedException(String message, RecordState recordState, Throwable cause) {
    super(message, cause);
    this.recordState = recordState;
  }

  public RecordState recordState() {
    return recordState;
  }
}
