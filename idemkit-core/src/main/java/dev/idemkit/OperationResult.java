package dev.idemkit;

import java.util.Objects;

/** What an operation ends with: a success, or a business rejection that retries must replay. */
public sealed interface OperationResult {

  StoredResponse response();

  record Success(StoredResponse response) implements OperationResult {
    public Success {
      Objects.requireNonNull(response);
    }
  }

  /**
   * A deterministic refusal (declined, insufficient funds, not found). The record becomes {@link
   * RecordState#FAILED_REPLAYABLE}; what the operation wrote in its transaction is kept.
   */
  record Rejection(StoredResponse response) implements OperationResult {
    public Rejection {
      Objects.requireNonNull(response);
    }
  }

  static OperationResult success(StoredResponse response) {
    return new Success(response);
  }

  static OperationResult rejected(StoredResponse response) {
    return new Rejection(response);
  }
}
