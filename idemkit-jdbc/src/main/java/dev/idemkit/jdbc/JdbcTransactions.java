package dev.idemkit.jdbc;

import java.sql.Connection;
import javax.sql.DataSource;

/**
 * How the store gets its connections: the seam that lets business rows and the idempotency record
 * commit in one transaction. The default runs its own transactions on a {@link DataSource}; a
 * framework module hands the store the connection bound to the caller's transaction instead.
 */
public interface JdbcTransactions {

  /** Work on one connection. */
  @FunctionalInterface
  interface ConnectionWork<T> {
    T run(Connection connection) throws Exception;
  }

  /**
   * Runs {@code work} in one READ COMMITTED transaction, whatever the connections' default level
   * ({@link ReadCommitted}): committed if it returns, rolled back if it throws (the exception
   * propagates unchanged).
   */
  <T> T inTransaction(ConnectionWork<T> work) throws Exception;

  /**
   * Asked by the store at the end of the work of {@link #inTransaction}, on its thread: whether the
   * transaction on {@code connection} is one this call began and commits as soon as the work
   * returns, with nothing else run on it in between. The store may then send its last statements
   * and the commit in one round trip (the commit that follows finds no transaction open and sends
   * nothing). The default says no: the store sends its last statements alone.
   */
  default boolean commitsRightAfterWork(Connection connection) {
    return false;
  }

  /** Runs {@code work} on a connection in auto-commit mode, outside any caller transaction. */
  <T> T withConnection(ConnectionWork<T> work) throws Exception;

  /** Transactions of the store's own on {@code dataSource}. */
  static JdbcTransactions of(DataSource dataSource) {
    return new DataSourceTransactions(dataSource);
  }
}
