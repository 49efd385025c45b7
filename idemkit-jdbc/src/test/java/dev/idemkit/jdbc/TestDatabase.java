package dev.idemkit.jdbc;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The databases the PostgreSQL tests run on, each started once per test JVM: an embedded server in
 * a fresh directory, and the server {@code IDEMKIT_TEST_JDBC_URL} names, if it does.
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
        Path dir = Files.createTempDirectory("idemkit-it-pg");
        IdemkitDatabase started = prepared(IdemkitDatabase.embedded(dir, POOL_SIZE));
        embedded = started;
        Runtime.getRuntime()
            .addShutdownHook(
                new Thread(
                    () -> {
                      started.close();
                      deleteTree(dir);
                    }));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return embedded;
  }

  /**
   * The server's database, in a schema of this run's own: the schema files apply to it from
   * scratch, whatever earlier runs left behind, and it is dropped when the JVM ends.
   */
  static synchronized IdemkitDatabase server() {
    if (server == null) {
      String url = System.getenv("IDEMKIT_TEST_JDBC_URL");
      String user = System.getenv("IDEMKIT_TEST_JDBC_USER");
      String password = System.getenv("IDEMKIT_TEST_JDBC_PASSWORD");
      String schema = "idemkit_it_" + UUID.randomUUID().toString().replace("-", "");
      try (Connection c = DriverManager.getConnection(url, user, password);
          Statement s = c.createStatement()) {
        s.execute("create schema " + schema);
      } catch (SQLException e) {
        throw new IllegalStateException("Cannot reach " + url, e);
      }
      String scoped = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
      server = prepared(IdemkitDatabase.connect(scoped, user, password, POOL_SIZE));
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    server.close();
                    try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement s = c.createStatement()) {
                      s.execute("drop schema " + schema + " cascade");
                    } catch (SQLException e) {
                      System.err.println("Could not drop test schema " + schema + ": " + e);
                    }
                  }));
    }
    return server;
  }

  /**
   * A schema of its own on the embedded server, with Idemkit's schema files applied: for tests that
   * run cleanup, which would otherwise walk every other test's records. Close it after use.
   */
  static IdemkitDatabase freshSchema(int poolSize) {
    String schema = "idemkit_own_" + UUID.randomUUID().toString().replace("-", "");
    String url;
    try (Connection c = embedded().dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create schema " + schema);
      url = c.getMetaData().getURL();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return anotherPool(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema, poolSize);
  }

  /**
   * {@link #freshSchema(int)} with its record table in {@code layout}, and the contract's ledger
   * table. Close it after use.
   */
  static IdemkitDatabase freshSchema(int poolSize, RecordLayout layout) {
    IdemkitDatabase db = freshSchema(poolSize);
    IdemkitSchema.migrate(db.dataSource(), layout);
    return prepared(db);
  }

  /**
   * Another pool on the embedded server, at {@code url} (a schema of {@link #freshSchema}), logged
   * in as the application (the embedded server asks for passwords): another instance's.
   */
  static IdemkitDatabase anotherPool(String url, int poolSize) {
    return embedded().connectAgain(url, poolSize);
  }

  /** Removes a database folder the tests made, once its server has stopped. */
  static void deleteTree(Path dir) {
    // A second pass catches what a server that was still stopping wrote during the first.
    for (int pass = 0; pass < 3 && Files.exists(dir); pass++) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      } catch (IOException | UncheckedIOException e) {
        // retried below
      }
      if (Files.exists(dir)) {
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
    if (Files.exists(dir)) {
      System.err.println("Could not remove " + dir);
    }
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
