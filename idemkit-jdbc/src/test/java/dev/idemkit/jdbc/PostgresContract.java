package dev.idemkit.jdbc;

import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.testing.IdempotencyStoreContract;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import javax.sql.DataSource;

/** The contract on a PostgreSQL database; the ledger is a real table in the same transaction. */
abstract class PostgresContract extends IdempotencyStoreContract {

  protected abstract DataSource dataSource();

  @Override
  protected IdempotencyStore createStore(Clock clock) {
    return PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource())).clock(clock).build();
  }

  @Override
  protected Ledger createLedger() {
    return new Ledger() {
      @Override
      public void write(StoreTransaction tx, String entry) throws Exception {
        try (PreparedStatement ps =
            tx.unwrap(Connection.class)
                .prepareStatement("insert into contract_ledger (entry) values (?)")) {
          ps.setString(1, entry);
          ps.executeUpdate();
        }
      }

      @Override
      public long count(String entry) throws Exception {
        try (Connection c = dataSource().getConnection();
            PreparedStatement ps =
                c.prepareStatement("select count(*) from contract_ledger where entry = ?")) {
          ps.setString(1, entry);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
          }
        }
      }
    };
  }
}
