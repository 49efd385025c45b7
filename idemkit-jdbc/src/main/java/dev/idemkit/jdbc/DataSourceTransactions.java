package dev.idemkit.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Plain JDBC transactions on a {@link DataSource}. */
final class DataSourceTransactions implements JdbcTransactions {

  private final DataSource dataSource;
  private final ReadCommitted readCommitted = new ReadCommitted();

  DataSourceTransactions(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        readCommitted.begin(c);
        T result = work.run(c);
        c.commit();
        return result;
      } catch (Throwable t) {
        // On a lost connection the rollback fails too: the work's failure is the one that says
        // what happened, so it propagates, with the rollback's failure attached.
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

  /** Always: the transaction is this class's own, and it commits right after the work. */
  @Override
  public boolean commitsRightAfterWork(Connection connection) {
    return true;
  }

  @Override
  public <T> T withConnection(ConnectionWork<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    }
  }
}
