package dev.idemkit;

import java.util.Objects;

/**
 * Thrown from anywhere inside an operation to refuse it deterministically. The transaction it was
 * thrown in is rolled back; the record becomes {@link RecordState#FAILED_REPLAYABLE} with {@link
 * #response()}, which every retry gets.
 */
public class BusinessRejectionException extends RuntimeException {

  private final transient StoredResponse response;

  public BusinessRejectionException(String message, StoredResponse response) {
    super(message);
    this.response = Objects.requireNonNull(response);
  }

  public StoredResponse response() {
    return response;
  }
}
