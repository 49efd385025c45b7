package dev.idemkit;

import dev.idemkit.spi.StoreTransaction;
import java.util.Optional;

/** What an operation, or one of its steps, can see. */
public interface OperationContext {

  /** The scoped key being executed. */
  ScopedKey id();

  /** True when this run resumes work an earlier owner started. */
  boolean resumed();

  /**
   * An operator's verdict on the call whose outcome stayed unknown, for the lookup that recovery
   * runs after it (see {@link OperatorResolution}), or, for a phase without a lookup whose far side
   * deduplicates by key, for the call recovery makes again; empty everywhere else.
   */
  default Optional<OperatorResolution> operatorResolution() {
    return Optional.empty();
  }

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
