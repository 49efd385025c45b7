package dev.idemkit.spring.boot;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.PhasedOperation;

/**
 * Teaches the recovery worker to finish one operation: given a record that needs recovery, the
 * phased operation to resume it from its recovery point, built from the record's durable data (the
 * original request is not stored). Declare one bean per phased operation.
 */
public interface RecoverableOperation {

  /** The operation name, as in {@code @Idempotent(operation = ...)}. */
  String operation();

  /** The operation to resume {@code record} with. */
  PhasedOperation<?> resume(IdempotencyRecord record);
}
