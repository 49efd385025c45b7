package dev.idemkit.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Makes the store's transactions READ COMMITTED whatever the connections' default level.
 *
 * <p>Why: the claim is {@code INSERT … ON CONFLICT DO NOTHING}. Under READ COMMITTED a claim that
 * waited on a racer's insert sees the racer's committed record in its next statement and answers
 * 409 or the replay. Under REPEATABLE READ or SERIALIZABLE the same wait ends in a serialization
 * failure ("could not serialize access"), so concurrent retries of one request would get errors
 * instead of their answer.
 *
 * <p>Cost: the connections' default level is read once, from the first connection (a pool hands out
 * connections of one configuration, and resets a level changed on a connection when it takes it
 * back). At the default READ COMMITTED nothing more happens. Otherwise each transaction begins with
 * {@code SET TRANSACTION ISOLATION LEVEL READ COMMITTED}, which applies to that transaction only
 * and leaves nothing to reset; it must be the transaction's first statement.
 */
public final class ReadCommitted {

  private volatile Boolean connectionsDefaultToIt;

  /**
   * Makes the transaction just begun on {@code connection} (no statement run in it yet) READ
   * COMMITTED.
   */
  public void begin(Connection connection) throws SQLException {
    Boolean isDefault = connectionsDefaultToIt;
    if (isDefault == null) {
      isDefault = connection.getTransactionIsolation() == Connection.TRANSACTION_READ_COMMITTED;
      connectionsDefaultToIt = isDefault;
    }
    if (!isDefault) {
      try (Statement s = connection.createStatement()) {
        s.execute("set transaction isolation level read committed");
      }
    }
  }
}
