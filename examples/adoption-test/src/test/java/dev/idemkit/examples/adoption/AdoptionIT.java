package dev.idemkit.examples.adoption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.idemkit.jdbc.EmbeddedLogin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Adoption as README.md tells it: a separate Spring Boot application made of the section "Add it to
 * your service" ({@link ReadmeService}, {@link ReadmeApp}), built by Maven against the starter this
 * build made, run with {@code java -jar} on the embedded PostgreSQL (no {@code
 * spring.datasource.url}), and held to what the section says: a {@code POST} without {@code
 * Idempotency-Key} is a 400; with one it runs once (201) and its retry gets the first answer with
 * {@code Idempotent-Replayed: true}; the same key with another body is a 422; one payment row.
 */
class AdoptionIT {

  private static final String TENANT = "tenant-a";
  private static final String PAYMENT =
      "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\"}";
  private static final String OTHER_PAYMENT =
      "{\"accountId\":\"acc_1\",\"amount\":\"99.00\",\"currency\":\"EUR\"}";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void theReadmesServiceAnswersAsTheReadmeSays() throws Exception {
    String version = System.getProperty("idemkit.version");
    String springBoot = System.getProperty("idemkit.spring-boot.version");
    ReadmeService readme = ReadmeService.of(Path.of(System.getProperty("idemkit.readme")));
    assertThat(readme.dependencies())
        .as("the README's dependency names the version this build makes")
        .contains("<version>" + version + "</version>");
    assertThat(readme.text())
        .as("the README names the Spring Boot version the starter is built with")
        .contains(springBoot);

    Path dir = Path.of(System.getProperty("idemkit.app-dir"));
    ReadmeApp.write(readme, springBoot, dir);
    Path jar =
        ReadmeApp.build(
            dir,
            Path.of(System.getProperty("idemkit.maven.home")),
            Path.of(System.getProperty("idemkit.it-repo")),
            Path.of(System.getProperty("idemkit.user-repo")),
            Path.of(System.getProperty("idemkit.settings")));

    int port = freePort();
    Path dataDir = dir.resolve("postgres");
    Path log = dir.resolve("app.log");
    Process app =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-jar",
                jar.toString(),
                "--server.port=" + port,
                // The embedded default, in a directory of this test's instead of ~/.idemkit.
                "--idemkit.embedded.data-dir=" + dataDir)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      URI payments = URI.create("http://127.0.0.1:" + port + "/payments");
      awaitListening(app, payments, log);
      String key = UUID.randomUUID().toString();

      HttpResponse<String> noKey = post(payments, null, PAYMENT);
      assertThat(noKey.statusCode())
          .as("a POST without Idempotency-Key: %s", noKey.body())
          .isEqualTo(400);

      HttpResponse<String> first = post(payments, key, PAYMENT);
      assertThat(first.statusCode())
          .as("the first POST with a key: %s", first.body())
          .isEqualTo(201);
      assertThat(first.body()).as("the created payment").contains("\"paymentId\"");
      assertThat(first.headers().firstValue("Idempotent-Replayed"))
          .as("the first answer is not a replay")
          .isEmpty();

      HttpResponse<String> retry = post(payments, key, PAYMENT);
      assertThat(retry.statusCode()).as("the retry: %s", retry.body()).isEqualTo(201);
      assertThat(retry.body()).as("the retry's body is the first answer's").isEqualTo(first.body());
      assertThat(retry.headers().firstValue("Location"))
          .as("the retry's Location is the first answer's")
          .isEqualTo(first.headers().firstValue("Location"));
      assertThat(retry.headers().firstValue("Idempotent-Replayed"))
          .as("the retry's replay marker")
          .contains("true");

      HttpResponse<String> other = post(payments, key, OTHER_PAYMENT);
      assertThat(other.statusCode())
          .as("the same key with another body: %s", other.body())
          .isEqualTo(422);

      assertThat(payments(dataDir)).as("rows in the application's payment table").isEqualTo(1);
    } finally {
      stop(app, dataDir);
      ReadmeApp.delete(dataDir);
    }
  }

  private HttpResponse<String> post(URI uri, String key, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("X-Tenant", TENANT)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Until the application answers HTTP at all (it has no health endpoint): a GET is a 405. */
  private void awaitListening(Process app, URI uri, Path log) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (true) {
      if (!app.isAlive()) {
        fail(
            "the application exited with %d (%s):%n%s",
            app.exitValue(), log, ReadmeApp.tail(log, 80));
      }
      try {
        http.send(
            HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.discarding());
        return;
      } catch (IOException notYet) {
        // Not listening yet.
      }
      if (System.nanoTime() > deadline) {
        fail(
            "the application did not listen within 3 minutes (%s):%n%s",
            log, ReadmeApp.tail(log, 80));
      }
      Thread.sleep(250);
    }
  }

  /**
   * Rows in {@code payment}, read as the application logs in to the embedded PostgreSQL it started
   * on {@code dataDir}: its port and password are in that directory.
   */
  private static long payments(Path dataDir) throws SQLException {
    EmbeddedLogin login = EmbeddedLogin.ofRunning(dataDir);
    try (Connection c =
            DriverManager.getConnection(login.jdbcUrl("postgres"), login.user(), login.password());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select count(*) from payment")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Gracefully (SIGTERM), so the application stops its embedded PostgreSQL too. If it has to be
   * killed, its PostgreSQL, a process of its own, is stopped by the pid it wrote in {@code
   * dataDir}.
   */
  private static void stop(Process app, Path dataDir) throws IOException, InterruptedException {
    app.destroy();
    if (app.waitFor(60, TimeUnit.SECONDS)) {
      return;
    }
    app.destroyForcibly().waitFor();
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (Files.exists(pidFile)) {
      ProcessHandle.of(Long.parseLong(Files.readAllLines(pidFile).get(0).trim()))
          .ifPresent(ProcessHandle::destroy);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
