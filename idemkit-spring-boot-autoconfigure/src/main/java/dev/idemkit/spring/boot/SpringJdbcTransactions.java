package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.ReadCommitted;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The store on Spring's transactions: the connection it uses is the one bound to the current Spring
 * transaction, so the idempotency record and the business rows written with {@code
 * JdbcTemplate}/{@code JdbcClient} commit together. Inside a transaction already under way, it runs
 * under a savepoint of it and commits with it.
 *
 * <p>The store's own transactions run at READ COMMITTED whatever the pool's default (see {@link
 * ReadCommitted}): a claim that waited on a racer's insert reads the racer's committed record in
 * its next statement. Inside a caller's transaction the caller's level applies; at REPEATABLE READ
 * or SERIALIZABLE, concurrent retries of one request can then fail that transaction with a
 * serialization failure.
 */
public final class SpringJdbcTransactions implements JdbcTransactions {

  private final DataSource dataSource;
  private final TransactionTemplate template;
  private final ReadCommitted readCommitted = new ReadCommitted();

  public SpringJdbcTransactions(DataSource dataSource, PlatformTransactionManager manager) {
    this.dataSource = dataSource;
    this.template = new TransactionTemplate(manager);
    // NESTED: its own transaction when there is none; inside a caller's transaction, a savepoint,
    // so a rolled-back operation (a business rejection is stored after its rollback) does not
    // doom the caller's transaction nor leave its own claim behind.
    template.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
  }

  @Override
  public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
    try {
      return template.execute(
          status -> {
            Connection c = DataSourceUtils.getConnection(dataSource);
            try {
              if (status.isNewTransaction()) {
                readCommitted.begin(c);
              }
              return work.run(c);
            } catch (RuntimeException e) {
              throw e;
            } catch (Exception e) {
              throw new CheckedFailure(e);
            } finally {
              DataSourceUtils.releaseConnection(c, dataSource);
            }
          });
    } catch (CheckedFailure e) {
      throw (Exception) e.getCause();
    }
  }

  @Override
  public <T> T withConnection(ConnectionWork<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    }
  }

  /** Carries a checked exception through the template, which rolls back on it. */
  private static final class CheckedFailure extends RuntimeException {
    CheckedFailure(Exception cause) {
      super(cause);
    }
  }
}
