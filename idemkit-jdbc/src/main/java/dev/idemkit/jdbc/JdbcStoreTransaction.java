package dev.idemkit.jdbc;

import dev.idemkit.ScopedKey;
import dev.idemkit.spi.StoreTransaction;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The store's transaction: the JDBC connection, reachable by {@code unwrap(Connection.class)}. It
 * remembers the record it claimed afresh until that record is advanced, so that the record's
 * completion in the same transaction is the plain {@link PostgresIdempotencyStore#FINISH_FRESH}.
 * When the store commits the transaction itself, it also holds back that completion, the
 * transaction's last write, to send it with the commit. Confined to the thread that runs the
 * transaction, like the connection.
 */
final class JdbcStoreTransaction implements StoreTransaction {
  private final Connection connection;
  ScopedKey claimedAfresh;
  HeldWrite lastWrite;

  JdbcStoreTransaction(Connection connection) {
    this.connection = connection;
  }

  /** The connection, with what was held back for the commit sent first (nothing else may pass). */
  Connection connection() throws SQLException {
    HeldWrite held = lastWrite;
    if (held != null) {
      lastWrite = null;
      held.send(connection, held.alone());
    }
    return connection;
  }

  /**
   * Ends the work: sends what was held back together with the commit, in one round trip (the held
   * write's {@link HeldWrite#withCommit()}); the caller's {@code commit()} that follows finds no
   * transaction open and sends nothing.
   */
  void sendHeldWithCommit() throws SQLException {
    HeldWrite held = lastWrite;
    lastWrite = null;
    if (held != null) {
      held.send(connection, held.withCommit());
    }
  }

  @Override
  public <T> T unwrap(Class<T> type) {
    if (type.isInstance(connection)) {
      HeldWrite held = lastWrite;
      try {
        return type.cast(connection());
      } catch (SQLException e) {
        throw new IdempotencyStoreException("Could not complete " + held, e);
      }
    }
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw new IllegalArgumentException("A JDBC store transaction has no " + type.getName());
  }
}
