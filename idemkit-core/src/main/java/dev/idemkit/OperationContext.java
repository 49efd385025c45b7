package dev.idemkit;

import dev.idemkit.spi.StoreTransaction;
import java.util.Map;

/** What an operation, or one of its phases, can see and keep. */
public interface OperationContext {

  /** The scoped key being executed. */
  ScopedKey id();

  /**
   * Small values that outlive a crash: whatever a phase puts here is stored with its recovery
   * point, and a takeover starts with it (e.g. the local payment id an external call's key is
   * derived from).
   */
  Map<String, String> data();

  /** True when this run resumes work an earlier owner started. */
  boolean resumed();

  /**
   * The current local transaction.
   *
   * @throws IllegalStateException during an external call, which runs outside any transaction
   */
  StoreTransaction transaction();

  /** The store's native handle of the current transaction, e.g. a {@code java.sql.Connection}. */
  default <T> T unwrap(Class<T> type) {
    return transaction().unwrap(type);
  }
}
