package dev.idemkit;

import java.util.Objects;

/**
 * An operation that only writes locally. It runs in one transaction with its record: either all of
 * it commits, or nothing, not even the record.
 *
 * <p>By default the record is written once, last: the operation's statements run first, then the
 * record is inserted, already finished with the operation's answer, as the transaction's last
 * statement (sent with the commit by a store that commits its own transactions). A concurrent
 * duplicate runs its statements too, then its insert of the record fails on the key and its whole
 * transaction rolls back; it is answered from the first's record (contract §5). An operation that
 * must hold the key while it runs (long local work whose duplicates should be answered 409 at once
 * rather than each run and roll back) asks for the claim first: {@link #claimingFirst}.
 */
@FunctionalInterface
public non-sealed interface LocalOperation extends Operation {

  /**
   * Does the work through {@link OperationContext#transaction()}.
   *
   * @return the answer to store and replay
   * @throws BusinessRejectionException to refuse deterministically (the work is rolled back and the
   *     rejection is stored)
   */
  OperationResult run(OperationContext ctx) throws Exception;

  /**
   * Whether the record is claimed ({@code IN_PROGRESS}) before the operation runs, in the same
   * transaction, and completed after it: a round trip and a row version more per first execution,
   * in exchange for concurrent duplicates waiting on the claim (or answered 409 once the store's
   * claim wait runs out) instead of each running the operation and rolling it back.
   */
  default boolean claimsFirst() {
    return false;
  }

  /** {@code operation}, run with its record claimed first ({@link #claimsFirst()}). */
  static LocalOperation claimingFirst(LocalOperation operation) {
    Objects.requireNonNull(operation);
    return new LocalOperation() {
      @Override
      public OperationResult run(OperationContext ctx) throws Exception {
        return operation.run(ctx);
      }

      @Override
      public boolean claimsFirst() {
        return true;
      }
    };
  }
}
