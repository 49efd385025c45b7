package dev.idemkit.spi;

/**
 * One local transaction of a store. Business code reaches the store's native handle through {@link
 * #unwrap(Class)} (a {@code java.sql.Connection} for the JDBC store), so its rows commit or roll
 * back together with the idempotency record.
 */
public interface StoreTransaction {

  /**
   * The store's native transaction handle.
   *
   * @throws IllegalArgumentException if this store has no handle of that type
   */
  <T> T unwrap(Class<T> type);
}
