package dev.idemkit.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The databases the PostgreSQL tests run on, each started once per test JVM: an embedded server
 * in a fresh directory, and the server {@code IDEMKIT_TEST_JDBC_URL} names, if it does.
 */
final class TestDatabase {

  /** Enough connections for the 64-way race, each racer on its own. */
  static final int POOL_SIZE = 80;

  private static IdemkitDatabase embedded;
  private static IdemkitDatabase server;

  private TestDatabase() {}

  static synchronized IdemkitDatabase embedded() {
    if (embedded == null) {
      try {
        embedded =
            prepared(
                IdemkitDatabase.embedded(Files.createTempDirectory("idemkit-it-pg"), POOL_SIZE));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return embedded;
  }

  static synchronized IdemkitDatabase server() {
    if (server == null) {
      server =
          prepared(
              IdemkitDatabase.connect(
                  System.getenv("IDEMKIT_TEST_JDBC_URL"),
                  System.getenv("IDEMKIT_TEST_JDBC_USER"),
                  System.getenv("IDEMKIT_TEST_JDBC_PASSWORD"),
                  POOL_SIZE));
    }
    return server;
  }

  private static IdemkitDatabase prepared(IdemkitDatabase db) {
    execute(db.dataSource(), "create table if not exists contract_ledger (entry text not null)");
    execute(
        db.dataSource(),
        "create index if not exists contract_ledger_entry_ix on contract_ledger (entry)");
    return db;
  }

  static void execute(DataSource ds, String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
