package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.jdbc.NoEmbeddedPostgresException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class EmbeddedPostgresEnvironmentPostProcessorTest {

  /** The property source the post-processor adds. */
  private static final String SOURCE = "idemkitDatabase";

  private final EmbeddedPostgresEnvironmentPostProcessor postProcessor =
      new EmbeddedPostgresEnvironmentPostProcessor();

  @Test
  void aConfiguredDataSourceUrlIsLeftAlone() {
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "spring.datasource.url", "jdbc:postgresql://db.example:5432/app",
                "IDEMKIT_JDBC_URL", "jdbc:postgresql://other:5432/other"));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getPropertySources().contains(SOURCE)).isFalse();
    assertThat(environment.getProperty("spring.datasource.url"))
        .isEqualTo("jdbc:postgresql://db.example:5432/app");
  }

  @Test
  void turnedOffItAddsNothing() {
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "idemkit.embedded.enabled", "false",
                "IDEMKIT_JDBC_URL", "jdbc:postgresql://other:5432/other"));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getPropertySources().contains(SOURCE)).isFalse();
    assertThat(environment.getProperty("spring.datasource.url")).isNull();
  }

  @Test
  void theServerIdemkitJdbcUrlNamesBecomesTheDataSource() {
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "IDEMKIT_JDBC_URL", "jdbc:postgresql://db.example:5432/payments",
                "IDEMKIT_JDBC_USER", "payments",
                "IDEMKIT_JDBC_PASSWORD", "s3cret"));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getProperty("spring.datasource.url"))
        .isEqualTo("jdbc:postgresql://db.example:5432/payments");
    assertThat(environment.getProperty("spring.datasource.username")).isEqualTo("payments");
    assertThat(environment.getProperty("spring.datasource.password")).isEqualTo("s3cret");
    assertThat(environment.getProperty("idemkit.embedded.active")).isNull();
  }

  @Test
  void blankCredentialsAreNotMapped() {
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "IDEMKIT_JDBC_URL", "jdbc:postgresql://db.example:5432/payments",
                "IDEMKIT_JDBC_USER", " "));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getProperty("spring.datasource.url"))
        .isEqualTo("jdbc:postgresql://db.example:5432/payments");
    assertThat(environment.containsProperty("spring.datasource.username")).isFalse();
    assertThat(environment.containsProperty("spring.datasource.password")).isFalse();
  }

  @Test
  void theApplicationsOwnSettingsWinOverTheMappedOnes() {
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "IDEMKIT_JDBC_URL", "jdbc:postgresql://db.example:5432/payments",
                "IDEMKIT_JDBC_USER", "payments",
                "spring.datasource.username", "app_user"));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    assertThat(environment.getProperty("spring.datasource.username")).isEqualTo("app_user");
  }

  /**
   * With nothing configured, an embedded server starts in the data directory. The directory is
   * under {@code target/} and the server stops when the JVM does: the post-processor keeps its
   * servers for the life of the process.
   */
  @Test
  void withNothingConfiguredAnEmbeddedServerStartsAndAnswers() throws Exception {
    Path dataDir = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "epp-pg-");
    ConfigurableEnvironment environment =
        environment(Map.of("idemkit.embedded.data-dir", dataDir.toString()));

    postProcessor.postProcessEnvironment(environment, new SpringApplication());

    String url = environment.getProperty("spring.datasource.url");
    String user = environment.getProperty("spring.datasource.username");
    String password = environment.getProperty("spring.datasource.password");
    assertThat(url).startsWith("jdbc:postgresql://");
    assertThat(user).isEqualTo("idemkit");
    assertThat(environment.getProperty("idemkit.embedded.active")).isEqualTo("true");
    assertThat(environment.getProperty("idemkit.embedded.description"))
        .contains(dataDir.toString());
    assertThat(dataDir.resolve("PG_VERSION")).exists();
    try (Connection c = DriverManager.getConnection(url, user, password);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("select rolsuper from pg_roles where rolname = current_user")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getBoolean(1)).as("the application is not a superuser").isFalse();
    }
    // No other local user gets in without a password, as the superuser or as the application.
    for (String anyone : new String[] {"postgres", "idemkit"}) {
      assertThatThrownBy(() -> DriverManager.getConnection(url, anyone, null).close())
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("password");
    }
    assertThatThrownBy(() -> DriverManager.getConnection(url, "postgres", password).close())
        .as("the application's password is not the superuser's")
        .isInstanceOf(SQLException.class);
    for (String file : new String[] {"idemkit-superuser.password", "idemkit-app.password"}) {
      assertThat(
              PosixFilePermissions.toString(Files.getPosixFilePermissions(dataDir.resolve(file))))
          .isEqualTo("rw-------");
    }

    ConfigurableEnvironment second =
        environment(Map.of("idemkit.embedded.data-dir", dataDir.toString()));
    postProcessor.postProcessEnvironment(second, new SpringApplication());
    assertThat(second.getProperty("spring.datasource.url"))
        .as("one server per data directory per JVM")
        .isEqualTo(url);

    ConfigurableEnvironment joined =
        environment(
            Map.of(
                "idemkit.embedded.data-dir", dataDir.toString(), "idemkit.embedded.join", "true"));
    postProcessor.postProcessEnvironment(joined, new SpringApplication());
    assertThat(joined.getProperty("spring.datasource.url"))
        .as("joins the running server")
        .isEqualTo(url);
    assertThat(joined.getProperty("spring.datasource.password")).isEqualTo(password);
    assertThat(joined.getProperty("idemkit.embedded.active")).isEqualTo("true");
  }

  @Test
  void joiningAFolderWhereNoServerRunsSaysSo() throws Exception {
    Path dataDir =
        Files.createTempDirectory(Files.createDirectories(Path.of("target")), "epp-none-");
    ConfigurableEnvironment environment =
        environment(
            Map.of(
                "idemkit.embedded.data-dir", dataDir.toString(), "idemkit.embedded.join", "true"));

    assertThatThrownBy(
            () -> postProcessor.postProcessEnvironment(environment, new SpringApplication()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("No embedded PostgreSQL is running on " + dataDir.toAbsolutePath());
  }

  @Test
  void aPlatformWithoutBinariesIsAnalysedAsOneLineAndWhereToPointInstead() {
    var failure =
        new NoEmbeddedPostgresException(
            "Linux aarch64", new IllegalStateException("Missing embedded postgres binaries"));

    var analysis =
        new EmbeddedPostgresFailureAnalyzer()
            .analyze(new IllegalStateException("the post-processor failed", failure));

    assertThat(analysis.getDescription())
        .isEqualTo(
            "No embedded PostgreSQL binaries for this platform (Linux aarch64) are on the class"
                + " path.");
    assertThat(analysis.getAction()).contains("spring.datasource.url").doesNotContain("\n");
  }

  /**
   * A standard environment without the machine's environment variables, so an {@code
   * IDEMKIT_JDBC_URL} exported where the build runs cannot change the outcome.
   */
  private static ConfigurableEnvironment environment(Map<String, Object> properties) {
    StandardEnvironment environment = new StandardEnvironment();
    environment
        .getPropertySources()
        .remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
    environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
    return environment;
  }
}
