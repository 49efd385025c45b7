package dev.idemkit.outbox;

import java.sql.Connection;

/**
 * What a consumer does with a message: its durable side effects, written on {@code transaction},
 * the transaction that also records the message in the inbox. They commit together or not at all.
 *
 * <p>Write every effect behind a unique key of its own too (a ledger entry unique per entry type
 * and source payment, say): the inbox stops a redelivered message, the unique key stops the same
 * effect arriving by another path.
 */
@FunctionalInterface
public interface MessageHandler {

  /**
   * Applies {@code message}. Do not commit, roll back or close {@code transaction}. Throw to fail
   * the message: nothing it wrote is kept and the inbox counts a failed attempt.
   */
  void apply(Connection transaction, EventEnvelope message) throws Exception;
}
