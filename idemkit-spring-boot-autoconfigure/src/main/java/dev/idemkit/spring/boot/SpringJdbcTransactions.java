package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.ReadCommitted;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;

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
  private final PlatformTransactionManager manager;
  private final DefaultTransactionDefinition definition;
  private final ReadCommitted readCommitted = new ReadCommitted();

  /** The transaction whose work runs on this thread (inTransaction can nest). */
  private final ThreadLocal<TransactionStatus> running = new ThreadLocal<>();

  public SpringJdbcTransactions(DataSource dataSource, PlatformTransactionManager manager) {
    this.dataSource = dataSource;
    this.manager = manager;
    // NESTED: its own transaction when there is none; inside a caller's transaction, a savepoint,
    // so a rolled-back operation (a business rejection is stored after its rollback) does not
    // doom the caller's transaction nor leave its own claim behind.
    this.definition = new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NESTED);
  }

  /**
   * Rolls back on any failure of the work. If the rollback fails as well (on a lost connection it
   * does), the work's failure propagates, with the rollback's attached: it is the one that says
   * what happened, and callers decide on it (a business rejection, a database out of reach).
   */
  @Override
  public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
    TransactionStatus status = manager.getTransaction(definition);
    T result;
    try {
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        if (status.isNewTransaction()) {
          readCommitted.begin(c);
        }
        TransactionStatus outer = running.get();
        running.set(status);
        try {
          result = work.run(c);
        } finally {
          if (outer == null) {
            running.remove();
          } else {
            running.set(outer);
          }
        }
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
    } catch (Exception | Error failure) {
      try {
        manager.rollback(status);
      } catch (RuntimeException | Error rollbackFailed) {
        failure.addSuppressed(rollbackFailed);
      }
      throw failure;
    }
    manager.commit(status);
    return result;
  }

  /**
   * Only when Spring's commit of this transaction can add nothing: the transaction is one this call
   * began (not a savepoint of a caller's), on a plain JDBC transaction manager whose connection is
   * {@code connection}, not marked rollback-only, and with no transaction synchronization
   * registered (one could write in its {@code beforeCommit}, which must not come after the commit).
   * Then the store sends its last statements with the commit, and Spring's {@code commit()} finds
   * nothing left to commit.
   */
  @Override
  public boolean commitsRightAfterWork(Connection connection) {
    TransactionStatus status = running.get();
    if (status == null
        || !status.isNewTransaction()
        || status.isRollbackOnly()
        || !(manager instanceof DataSourceTransactionManager)) {
      return false;
    }
    if (TransactionSynchronizationManager.isSynchronizationActive()
        && !TransactionSynchronizationManager.getSynchronizations().isEmpty()) {
      return false;
    }
    return TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder h
        && h.getConnection() == connection;
  }

  @Override
  public <T> T withConnection(ConnectionWork<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    }
  }
}
