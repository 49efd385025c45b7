package dev.idemkit.jdbc;

import java.sql.Connection;
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
        c.rollback();
        throw t;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    }
  }

  @Override
  public <T> T withConnection(ConnectionWork<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    }
  }
}
