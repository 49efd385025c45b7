package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.StaticKeyProvider;
import dev.idemkit.examples.provider.ProviderSimulator;
import dev.idemkit.jdbc.IdemkitDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The payments service as real, separate processes (the packaged jar), on a PostgreSQL and a
 * provider simulator that this test JVM owns, so that a service process can be killed with {@code
 * kill -9} or paused with {@code SIGSTOP} while the database and the provider live on.
 */
final class ServiceProcesses implements AutoCloseable {

  static final Path JAR = Path.of("target/payments-service.jar");

  final EmbeddedPostgres postgres;
  private final Path dataDir;
  final DataSource payments;
  final ProviderSimulator provider;
  private final List<Service> started = new ArrayList<>();
  private final Path logs;

  ServiceProcesses(ProviderSimulator.Config providerConfig) throws Exception {
    assertThat(JAR).as("the packaged service (mvn package runs before the ITs)").exists();
    dataDir = Files.createTempDirectory("crash-pg");
    postgres = IdemkitDatabase.embeddedServer(dataDir, 200).start();
    try (Connection c = postgres.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create database payments");
    }
    payments = postgres.getDatabase("postgres", "payments");
    provider = ProviderSimulator.start(providerConfig, postgres.getPostgresDatabase());
    logs = Files.createDirectories(Path.of("target", "service-logs"));
  }

  /** One service process. */
  final class Service {
    final Process process;
    final int port;

    Service(Process process, int port) {
      this.process = process;
      this.port = port;
    }

    URI uri(String path) {
      return URI.create("http://localhost:" + port + path);
    }

    void signal(String signal) throws Exception {
      new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid()))
          .inheritIO()
          .start()
          .waitFor();
    }
  }

  Service start(String name, String... extra) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-jar",
                JAR.toString(),
                "--server.port=" + port,
                "--spring.datasource.url=jdbc:postgresql://localhost:"
                    + postgres.getPort()
                    + "/payments",
                "--spring.datasource.username=postgres",
                "--idemkit.issued-keys.secret=a-secret-the-instances-share",
                "--payments.provider.url=http://127.0.0.1:" + provider.port(),
                "--payments.provider.timeout=PT2S",
                "--payments.mail.embedded-port=0",
                "--idemkit.lease=PT3S",
                "--idemkit.recovery.interval=PT0.5S",
                "--spring.jmx.enabled=false",
                "--logging.level.root=warn"));
    command.addAll(ownSecrets());
    command.addAll(List.of(extra));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(logs.resolve(name + ".log").toFile())
            .start();
    Service service = new Service(process, port);
    started.add(service);
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (true) {
      assertThat(process.isAlive())
          .as(name + " died at start-up; see target/service-logs")
          .isTrue();
      try {
        HttpResponse<String> health =
            http.send(
                HttpRequest.newBuilder(service.uri("/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (health.body().contains("\"UP\"")) {
          return service;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      assertThat(System.nanoTime()).as(name + " did not start in 90 s").isLessThan(deadline);
      Thread.sleep(200);
    }
  }

  /** Random per test JVM, shared by its instances: a master key or HMAC key in base64. */
  private static final String MASTER_KEY = StaticKeyProvider.newKeyBase64();

  private static final String HMAC_KEY = StaticKeyProvider.newKeyBase64();

  /**
   * The secrets of a deployment of its own, which the service needs outside the embedded demo
   * (demo/DemoSecrets): the tenants' and the operator's API keys (the names the tests use), a
   * master key and an HMAC key.
   */
  static List<String> ownSecrets() {
    return List.of(
        "--payments.api-keys." + HttpTestSupport.TENANT_A + "=tenant_demo_a",
        "--payments.api-keys." + HttpTestSupport.TENANT_B + "=tenant_demo_b",
        "--payments.admin-api-keys.sk_test_admin=demo_operator",
        "--idemkit.protection.encryption.master-keys.own-mk1=" + MASTER_KEY,
        "--idemkit.protection.encryption.current-master-key=own-mk1",
        "--idemkit.protection.fingerprint.hmac-keys.own-fk1=" + HMAC_KEY,
        "--idemkit.protection.fingerprint.current-hmac-key=own-fk1");
  }

  /** What the provider really charged for one payment. */
  long charged(String paymentId) throws Exception {
    return provider.charges(paymentId, 1).summary().succeeded();
  }

  long paymentsFor(String reference) throws Exception {
    try (Connection c = payments.getConnection();
        PreparedStatement ps =
            c.prepareStatement("select count(*) from payment where merchant_reference = ?")) {
      ps.setString(1, reference);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  String query(String sql, String... params) throws Exception {
    try (Connection c = payments.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  @Override
  public void close() throws Exception {
    for (Service s : started) {
      s.signal("CONT");
      s.process.destroyForcibly().waitFor();
    }
    provider.close();
    postgres.close();
    HttpTestSupport.deleteTree(dataDir);
  }
}
