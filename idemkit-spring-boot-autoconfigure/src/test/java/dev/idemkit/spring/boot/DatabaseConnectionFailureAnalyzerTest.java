package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.jdbc.EmbeddedLogin;
import dev.idemkit.jdbc.IdemkitDatabase;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.mock.env.MockEnvironment;

/**
 * An application whose database cannot be connected to fails to start with one analysed line: the
 * URL and the driver's reason, and what to check. The analyzers are the ones the starter registers,
 * loaded as Spring Boot loads them.
 */
class DatabaseConnectionFailureAnalyzerTest {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 2);
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  TransactionAutoConfiguration.class,
                  IdemkitAutoConfiguration.class))
          .withPropertyValues("idemkit.issued-keys.secret=a-test-secret-of-enough-bytes");

  @Test
  void aClosedPortIsAnalysedAsOneLineNamingTheDatabase() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0)) {
      closed = socket.getLocalPort();
    }
    String url = "jdbc:postgresql://127.0.0.1:" + closed + "/payments";

    FailureAnalysis analysis = analysisOfStartWith("spring.datasource.url=" + url);

    assertThat(analysis.getDescription())
        .startsWith(
            "Could not connect to the database at "
                + url
                + ": Connection to 127.0.0.1:"
                + closed
                + " refused.")
        .doesNotContain("\n");
    assertThat(analysis.getAction())
        .contains("spring.datasource.url")
        .contains("spring.datasource.username")
        .doesNotContain("\n");
  }

  @Test
  void aDatabaseThatDoesNotExistIsAnalysedAsOneLine() throws Exception {
    String password =
        Files.readString(dataDir.resolve(EmbeddedLogin.APP_PASSWORD_FILE), StandardCharsets.UTF_8)
            .trim();
    String url =
        database
            .dataSource()
            .unwrap(HikariDataSource.class)
            .getJdbcUrl()
            .replace("/postgres", "/no_such_database");

    FailureAnalysis analysis =
        analysisOfStartWith(
            "spring.datasource.url=" + url,
            "spring.datasource.username=" + EmbeddedLogin.APP_ROLE,
            "spring.datasource.password=" + password);

    assertThat(analysis.getDescription())
        .isEqualTo(
            "Could not connect to the database at "
                + url
                + ": FATAL: database \"no_such_database\" does not exist");
  }

  /** Starts the application with {@code properties}; its failure as Spring Boot analyses it. */
  private FailureAnalysis analysisOfStartWith(String... properties) {
    FailureAnalysis[] analysis = new FailureAnalysis[1];
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              Throwable failure = context.getStartupFailure();
              assertThat(failure).as("the start failed").isNotNull();
              analysis[0] =
                  SpringFactoriesLoader.forDefaultResourceLocation()
                      .load(
                          FailureAnalyzer.class,
                          ArgumentResolver.of(Environment.class, environment(properties))
                              .and(BeanFactory.class, new DefaultListableBeanFactory()),
                          // As Spring Boot does, it skips an analyzer it cannot build here.
                          FailureHandler.handleMessage((message, e) -> {}))
                      .stream()
                      .map(analyzer -> analyzer.analyze(failure))
                      .filter(Objects::nonNull)
                      .findFirst()
                      .orElseThrow(() -> new AssertionError("no analysis of " + failure));
            });
    return analysis[0];
  }

  /** The environment Spring Boot hands the analyzers: the failed application's properties. */
  private static Environment environment(String... properties) {
    MockEnvironment environment = new MockEnvironment();
    for (String property : properties) {
      int eq = property.indexOf('=');
      environment.setProperty(property.substring(0, eq), property.substring(eq + 1));
    }
    return environment;
  }
}
