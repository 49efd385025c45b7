package dev.idemkit;

/**
 * An operation that only writes locally. It runs in the same transaction as the claim and the
 * completion of its record: either all of it commits, or nothing, not even the claim.
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
}
