package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.EmbeddedLogin;
import dev.idemkit.jdbc.IdemkitDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * The embedded default. With no {@code spring.datasource.url} (and no {@code idemkit.shards})
 * configured, an application gets a PostgreSQL anyway: the server {@code IDEMKIT_JDBC_URL} names,
 * or else an embedded PostgreSQL (from Maven, no install) keeping its data in {@code
 * idemkit.embedded.data-dir} (default {@code IDEMKIT_DATA_DIR}, else {@code ~/.idemkit/postgres}),
 * so a restart loses nothing. Set {@code idemkit.embedded.enabled=false} to turn it off. One server
 * per data directory per JVM, shared by every application context that asks. The application logs
 * in as a role that is not a superuser, with a password kept in the data directory ({@link
 * EmbeddedLogin}): other local users cannot connect.
 *
 * <p>With {@code idemkit.embedded.join=true} the application starts no server: it joins the one
 * another instance runs on the same data directory (its port and password from that directory), as
 * a second instance of the same embedded demo ({@code idemkit.embedded.active}).
 */
public class EmbeddedPostgresEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

  /**
   * Late, after the application's configuration is read; post-processors that depend on {@code
   * idemkit.embedded.active} run after it.
   */
  public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

  private static final String ZONKY = "io.zonky.test.db.postgres.embedded.EmbeddedPostgres";
  private static final Map<Path, EmbeddedLogin.Started> SERVERS = new HashMap<>();

  @Override
  public void postProcessEnvironment(
      ConfigurableEnvironment environment, SpringApplication application) {
    if (environment.containsProperty("spring.datasource.url")
        || IdemkitShardsAutoConfiguration.ShardsConfigured.in(environment)
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
      Path dataDir = Path.of(dir).toAbsolutePath().normalize();
      boolean join = environment.getProperty("idemkit.embedded.join", Boolean.class, false);
      EmbeddedLogin login = join ? EmbeddedLogin.ofRunning(dataDir) : server(dataDir);
      properties.put("spring.datasource.url", login.jdbcUrl("postgres"));
      properties.put("spring.datasource.username", login.user());
      properties.put("spring.datasource.password", login.password());
      properties.put("idemkit.embedded.active", "true");
      properties.put("idemkit.embedded.data-dir", dir);
      properties.put(
          "idemkit.embedded.description",
          (join
                  ? "the embedded PostgreSQL of another instance on port "
                  : "embedded PostgreSQL on port ")
              + login.port()
              + ", data in "
              + dir);
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

  @Override
  public int getOrder() {
    return ORDER;
  }

  private static synchronized EmbeddedLogin server(Path dataDir) {
    return SERVERS
        .computeIfAbsent(
            dataDir,
            dir -> {
              try {
                return EmbeddedLogin.start(dir, 200);
              } catch (IOException e) {
                throw new UncheckedIOException(
                    "Could not start the embedded PostgreSQL in " + dir + ": " + e.getMessage(), e);
              }
            })
        .login();
  }
}
