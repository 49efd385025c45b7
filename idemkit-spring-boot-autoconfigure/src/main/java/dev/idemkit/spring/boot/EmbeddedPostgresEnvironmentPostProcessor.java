package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.IdemkitDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * The embedded default. With no {@code spring.datasource.url} configured, an application gets a
 * PostgreSQL anyway: the server {@code IDEMKIT_JDBC_URL} names, or else an embedded PostgreSQL
 * (from Maven, no install) keeping its data in {@code idemkit.embedded.data-dir} (default {@code
 * IDEMKIT_DATA_DIR}, else {@code ~/.idemkit/postgres}), so a restart loses nothing. Set {@code
 * idemkit.embedded.enabled=false} to turn it off. One server per data directory per JVM, shared by
 * every application context that asks.
 */
public class EmbeddedPostgresEnvironmentPostProcessor implements EnvironmentPostProcessor {

  private static final String ZONKY = "io.zonky.test.db.postgres.embedded.EmbeddedPostgres";
  private static final Map<Path, EmbeddedPostgres> SERVERS = new HashMap<>();

  @Override
  public void postProcessEnvironment(
      ConfigurableEnvironment environment, SpringApplication application) {
    if (environment.containsProperty("spring.datasource.url")
        || !environment.getProperty("idemkit.embedded.enabled", Boolean.class, true)) {
      return;
    }
    Map<String, Object> properties = new HashMap<>();
    String url = environment.getProperty("IDEMKIT_JDBC_URL");
    if (url != null && !url.isBlank()) {
      properties.put("spring.datasource.url", url);
      putIfSet(
          properties, "spring.datasource.username", environment.getProperty("IDEMKIT_JDBC_USER"));
      putIfSet(
          properties,
          "spring.datasource.password",
          environment.getProperty("IDEMKIT_JDBC_PASSWORD"));
    } else if (ClassUtils.isPresent(ZONKY, getClass().getClassLoader())) {
      String dir =
          environment.getProperty(
              "idemkit.embedded.data-dir",
              environment.getProperty(
                  "IDEMKIT_DATA_DIR", IdemkitDatabase.DEFAULT_DATA_DIR.toString()));
      EmbeddedPostgres pg = server(Path.of(dir).toAbsolutePath().normalize());
      properties.put("spring.datasource.url", pg.getJdbcUrl("postgres", "postgres"));
      properties.put("spring.datasource.username", "postgres");
      properties.put("idemkit.embedded.active", "true");
      properties.put("idemkit.embedded.data-dir", dir);
      properties.put(
          "idemkit.embedded.description",
          "embedded PostgreSQL on port " + pg.getPort() + ", data in " + dir);
    } else {
      return;
    }
    environment.getPropertySources().addLast(new MapPropertySource("idemkitDatabase", properties));
  }

  private static void putIfSet(Map<String, Object> properties, String name, String value) {
    if (value != null && !value.isBlank()) {
      properties.put(name, value);
    }
  }

  private static synchronized EmbeddedPostgres server(Path dataDir) {
    return SERVERS.computeIfAbsent(
        dataDir,
        dir -> {
          try {
            return IdemkitDatabase.embeddedServer(dir, 200).start();
          } catch (IOException e) {
            throw new UncheckedIOException(
                "Could not start the embedded PostgreSQL in " + dir + ": " + e.getMessage(), e);
          } catch (RuntimeException e) {
            throw EmbeddedDataDirInUseException.ifLockHeld(dir, e);
          }
        });
  }
}
