package dev.idemkit.examples.payments.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.examples.payments.payments.ProviderProperties;
import dev.idemkit.examples.provider.ProviderSimulator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;

/**
 * Demo mode: with no {@code payments.provider.url}, the provider simulator runs in this process on
 * 127.0.0.1, on {@code payments.provider.embedded-port} if set, else on the service's port + 1
 * (8081 beside 8080; any free port if that one is taken or the service's port is 0), keeping its
 * charges in a database of its own on the same PostgreSQL server, named after the service's ({@code
 * <database>_provider}). Instances of the service that share a database share that one too, like
 * the nodes of one provider; a service (or a test) with a database of its own has its own.
 */
public class EmbeddedProvider implements DisposableBean {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedProvider.class);

  private final ProviderSimulator simulator;
  private final HikariDataSource dataSource;

  /** Starts the simulator; {@code serverPort} is the service's ({@code server.port}). */
  public EmbeddedProvider(
      ProviderProperties provider,
      DataSource appDataSource,
      DataSourceProperties database,
      int serverPort) {
    String name = providerDatabase(database.getUrl());
    ensureDatabase(appDataSource, name, "provider", "payments.provider.url");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(withDatabase(database.getUrl(), name));
    config.setUsername(database.getUsername());
    config.setPassword(database.getPassword());
    config.setMaximumPoolSize(10);
    config.setPoolName("provider-simulator");
    dataSource = new HikariDataSource(config);
    boolean following = provider.embeddedPort() < 0;
    int port = following ? (serverPort == 0 ? 0 : serverPort + 1) : provider.embeddedPort();
    try {
      simulator = startSimulator(provider, port, following);
    } catch (IOException e) {
      dataSource.close();
      throw new UncheckedIOException(
          "Could not start the provider simulator on port "
              + port
              + ": "
              + e.getMessage()
              + ". Set payments.provider.embedded-port=0 for any free port.",
          e);
    }
    log.info(
        "Provider simulator (demo mode) on http://127.0.0.1:{}, database {}",
        simulator.port(),
        name);
  }

  private ProviderSimulator startSimulator(ProviderProperties provider, int port, boolean following)
      throws IOException {
    try {
      return ProviderSimulator.start(config(provider, port), dataSource);
    } catch (BindException e) {
      if (!following || port == 0) {
        throw e;
      }
      log.info("Port {} is taken; the provider simulator takes any free port", port);
      return ProviderSimulator.start(config(provider, 0), dataSource);
    }
  }

  private static ProviderSimulator.Config config(ProviderProperties provider, int port) {
    return ProviderSimulator.Config.defaults(port)
        .withProbabilities(ProviderSimulator.Config.parseProbabilities(provider.faults()))
        .withLatency(provider.latency())
        .withLateAnswer(provider.timeout().plus(Duration.ofSeconds(3)));
  }

  /**
   * The simulator's database: the service's database name with {@code _provider}, as a plain
   * PostgreSQL identifier ({@code payments} → {@code payments_provider}).
   */
  public static String providerDatabase(String url) {
    return simulatorDatabase(url, "_provider");
  }

  /** A demo simulator's database: the service's database name with {@code suffix}. */
  static String simulatorDatabase(String url, String suffix) {
    int slash = url.indexOf('/', "jdbc:postgresql://".length());
    int query = url.indexOf('?', slash);
    String service = url.substring(slash + 1, query < 0 ? url.length() : query);
    String name = (service.isEmpty() ? "postgres" : service).toLowerCase(Locale.ROOT);
    name = name.replaceAll("[^a-z0-9_]", "_") + suffix;
    return name.length() > 63 ? name.substring(name.length() - 63) : name;
  }

  /** The simulator's base URL. */
  public String baseUrl() {
    return "http://127.0.0.1:" + simulator.port();
  }

  @Override
  public void destroy() {
    simulator.close();
    dataSource.close();
  }

  /**
   * Creates database {@code name} (a plain identifier) on the server, unless it exists, and says so
   * in the log: the {@code simulator}'s database, made because {@code urlProperty} is not set.
   */
  static void ensureDatabase(DataSource ds, String name, String simulator, String urlProperty) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      try (PreparedStatement exists =
          c.prepareStatement("select 1 from pg_database where datname = ?")) {
        exists.setString(1, name);
        try (ResultSet rs = exists.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      // name is [a-z0-9_] only (providerDatabase), so it needs no quoting.
      s.execute("create database " + name);
      log.info(
          "Created database {} on the service's PostgreSQL for the {} simulator (demo mode: {} is"
              + " not set)",
          name,
          simulator,
          urlProperty);
    } catch (Exception e) {
      if (!String.valueOf(e.getMessage()).contains("already exists")) {
        throw new IllegalStateException(
            "Could not create database "
                + name
                + " for the "
                + simulator
                + " simulator (demo mode): give the service's database user CREATEDB, create it"
                + " yourself, or set "
                + urlProperty
                + " to a real "
                + simulator
                + ".",
            e);
      }
    }
  }

  /** The same server, another database: {@code jdbc:postgresql://host:port/db?params}. */
  public static String withDatabase(String url, String name) {
    int slash = url.indexOf('/', "jdbc:postgresql://".length());
    int query = url.indexOf('?', slash);
    return url.substring(0, slash + 1) + name + (query < 0 ? "" : url.substring(query));
  }
}
