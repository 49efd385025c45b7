package dev.idemkit.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.jdbc.IdemkitDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * One embedded PostgreSQL per test JVM (the same server the embedded default runs), with the outbox
 * schema and the tables the tests' consumers write; {@link #reset()} empties them.
 */
final class TestPostgres {

  static final int POOL_SIZE = 60;

  private static EmbeddedPostgres server;
  private static HikariDataSource pool;
  private static Path dir;

  private TestPostgres() {}

  static synchronized DataSource dataSource() {
    if (pool == null) {
      try {
        dir = Files.createTempDirectory("idemkit-outbox-it");
        server = IdemkitDatabase.embeddedServer(dir, 200).start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      pool = pool(jdbcUrl(), POOL_SIZE);
      OutboxSchema.migrate(pool);
      execute(
          """
          create table test_ledger (consumer text not null, payment_id text not null,
                                    amount bigint not null,
                                    applied_order bigserial not null);
          create table test_received (consumer text not null, message_id uuid not null,
                                      aggregate_id text not null, sequence bigint not null,
                                      seen_at timestamptz not null default clock_timestamp());
          """);
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    pool.close();
                    try {
                      server.close();
                    } catch (IOException e) {
                      // going away anyway
                    }
                    deleteQuietly(dir);
                  }));
    }
    return pool;
  }

  static String jdbcUrl() {
    dataSourceStarted();
    return server.getJdbcUrl("postgres", "postgres");
  }

  private static void dataSourceStarted() {
    if (server == null) {
      dataSource();
    }
  }

  static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername("postgres");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(2);
    config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    return new HikariDataSource(config);
  }

  static void reset() {
    dataSource();
    execute(
        """
        truncate idemkit_outbox, idemkit_outbox_aggregate, idemkit_inbox, idemkit_delivery,
                 idemkit_inbox_sequence, test_ledger, test_received
        """);
  }

  static void execute(String sql) {
    try (Connection c = dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  static long count(String sql, Object... args) {
    try (Connection c = dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** PostgreSQL's plan for {@code sql}, as text. */
  static String plan(String sql) {
    StringBuilder out = new StringBuilder();
    try (Connection c = dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("explain " + sql)) {
      while (rs.next()) {
        out.append(rs.getString(1)).append('\n');
      }
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
    return out.toString();
  }

  /** The one timestamptz the query answers. */
  static java.time.Instant timestamp(String sql) {
    try (Connection c = dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(sql);
        ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  private static void deleteQuietly(Path p) {
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }
}
