package dev.idemkit.jdbc;

/** The database failed under the store (connection lost, statement refused). */
public class IdempotencyStoreException extends RuntimeException {
  public IdempotencyStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
