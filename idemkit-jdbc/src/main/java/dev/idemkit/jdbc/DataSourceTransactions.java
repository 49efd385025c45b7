package dev.idemkit.jdbc;

import java.sql.Connection;
import javax.sql.DataSource;

/** Plain JDBC transactions on a {@link DataSource}, on the {@link Transactions} template. */
final class DataSourceTransactions implements JdbcTransactions {

  private final DataSource dataSource;
  private final ReadCommitted readCommitted = new ReadCommitted();

  DataSourceTransactions(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
    return Transactions.<T, Exception>inTransaction(
        dataSource,
        c -> {
          readCommitted.begin(c);
          return work.run(c);
        });
  }

  /** Always: the transaction is this class's own, and it commits right after the work. */
  @Override
  public boolean commitsRightAfterWork(Connection connection) {
    return true;
  }

  @Override
  public <T> T withConnection(ConnectionWork<T> work) throws Exception {
    try (Connection c = Transactions.autoCommitting(dataSource)) {
      return work.run(c);
    }
  }
}
