package dev.idemkit.outbox.support;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The transaction template of the outbox and transport modules: work on one connection of a {@link
 * DataSource}, committed if it returns, rolled back if it throws (an {@link Error} included), the
 * connection's auto-commit setting restored either way. Plain JDBC: these modules bring no
 * transaction framework, and each of their transactions is their own (a relay round, a delivery
 * round, an inbox batch), never the application's.
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
   * back and the failure propagates. If the rollback fails too, the connection was lost (the
   * database ended the session, the network went): that failure propagates, the work's attached to
   * it as suppressed, since a lost connection is what the caller acts on (every write of the
   * transaction is gone), whatever the work was doing when it went.
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
        } catch (SQLException lost) {
          lost.addSuppressed(t);
          throw lost;
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
