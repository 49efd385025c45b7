package dev.idemkit.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Idemkit's one transaction template on plain JDBC: work on one connection of a {@link DataSource},
 * committed if it returns, rolled back if it throws (an {@link Error} included), the connection's
 * auto-commit setting restored either way. The store's own transactions ({@link
 * JdbcTransactions#of}) and the outbox's (a relay round, a delivery round, an inbox batch) run on
 * it; none of them brings a transaction framework.
 *
 * <p>After the commit the caller reports what the transaction did (to listeners): only then is it
 * true.
 */
public final class Transactions {

  private Transactions() {}

  /** Work in a transaction; may throw {@code E} besides the SQL failures. */
  @FunctionalInterface
  public interface Work<T, E extends Exception> {
    T run(Connection transaction) throws SQLException, E;
  }

  /**
   * Runs {@code work} in a transaction of its own on a connection of {@code dataSource} and commits
   * it; answers what the work answered. If the work or the commit throws, the transaction is rolled
   * back and that failure propagates unchanged. If the rollback fails too (the connection was lost:
   * the database ended the session, the network went), the work's failure still propagates, since
   * it says what happened, with the rollback's attached to it as suppressed.
   */
  public static <T, E extends Exception> T inTransaction(DataSource dataSource, Work<T, E> work)
      throws SQLException, E {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (Throwable t) {
        try {
          c.rollback();
        } catch (SQLException rollbackFailed) {
          t.addSuppressed(rollbackFailed);
        }
        throw t;
      } finally {
        try {
          c.setAutoCommit(autoCommit);
        } catch (SQLException lost) {
          // The connection is gone; the pool discards it.
        }
      }
    }
  }

  /**
   * A connection of {@code dataSource} on which each statement commits on its own, as the callers
   * of this method expect: a pool configured with auto-commit off (Hikari's {@code
   * autoCommit=false}) hands out connections whose statements would otherwise wait for a commit
   * that never comes, and be rolled back when the connection goes back to the pool. The pool resets
   * the setting when the connection returns.
   */
  public static Connection autoCommitting(DataSource dataSource) throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      return c;
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }
}
