package dev.idemkit.outbox;

import java.sql.Connection;
import java.util.List;

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
   * the message: nothing it wrote is kept and the inbox counts a failed attempt. Do not catch an
   * {@link java.sql.SQLException} and go on: PostgreSQL aborts the transaction at the error, and a
   * handler that returns with it aborted fails the message all the same (roll back to a savepoint
   * of your own first if you mean to go on).
   */
  void apply(Connection transaction, EventEnvelope message) throws Exception;

  /**
   * Applies a batch of messages, in their order, in one transaction (the inbox's, which claims them
   * all). The default applies each in turn. Override it to write the whole batch in fewer round
   * trips (one JDBC batch for every message's rows, say); throw {@link MessageFailedException} when
   * you know which message failed.
   */
  default void applyAll(Connection transaction, List<EventEnvelope> messages) throws Exception {
    for (EventEnvelope m : messages) {
      try {
        apply(transaction, m);
      } catch (Exception e) {
        throw new MessageFailedException(m, e);
      }
    }
  }
}
