package dev.idemkit.examples.payments.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.examples.payments.PaymentsProperties;
import dev.idemkit.examples.provider.ProviderSimulator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.stereotype.Component;

/**
 * Demo mode: with no {@code payments.provider.url}, the provider simulator runs in this process on
 * {@code 127.0.0.1:payments.provider.embedded-port} (8081), keeping its charges in a database of
 * its own ({@code provider}) on the same PostgreSQL server. Several instances of the service on one
 * server share that database, like the nodes of one provider.
 */
@Component
public class EmbeddedProvider implements DisposableBean {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedProvider.class);

  private final ProviderSimulator simulator;
  private final HikariDataSource dataSource;

  public EmbeddedProvider(
      PaymentsProperties properties, DataSource appDataSource, DataSourceProperties database) {
    PaymentsProperties.Provider provider = properties.provider();
    if (!provider.embedded()) {
      simulator = null;
      dataSource = null;
      return;
    }
    ensureDatabase(appDataSource, "provider");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(withDatabase(database.getUrl(), "provider"));
    config.setUsername(database.getUsername());
    config.setPassword(database.getPassword());
    config.setMaximumPoolSize(10);
    config.setPoolName("provider-simulator");
    dataSource = new HikariDataSource(config);
    try {
      simulator =
          ProviderSimulator.start(
              ProviderSimulator.Config.defaults(provider.embeddedPort())
                  .withProbabilities(ProviderSimulator.Config.parseProbabilities(provider.faults()))
                  .withLateAnswer(provider.timeout().plus(Duration.ofSeconds(3))),
              dataSource);
    } catch (IOException e) {
      dataSource.close();
      throw new UncheckedIOException(
          "Could not start the provider simulator on port " + provider.embeddedPort(), e);
    }
    log.info("Provider simulator (demo mode) on http://127.0.0.1:{}", simulator.port());
  }

  /** The simulator's base URL, when it runs here. */
  public String baseUrl() {
    return simulator == null ? null : "http://127.0.0.1:" + simulator.port();
  }

  @Override
  public void destroy() {
    if (simulator != null) {
      simulator.close();
      dataSource.close();
    }
  }

  /** Creates database {@code name} (a plain identifier) on the server, unless it exists. */
  static void ensureDatabase(DataSource ds, String name) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery("select 1 from pg_database where datname = '" + name + "'")) {
        if (rs.next()) {
          return;
        }
      }
      s.execute("create database " + name);
    } catch (Exception e) {
      if (!String.valueOf(e.getMessage()).contains("already exists")) {
        throw new IllegalStateException("Could not create the simulator's database", e);
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
