package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * Two instances of the packaged service on one machine, as docs/operations.md runs them: the second
 * one started on the first one's data folder stops with one clear line; started with that page's
 * line ({@code --idemkit.embedded.join=true}), it serves the same payments. The demo provider
 * simulator follows the service's port and keeps its charges in a database named after the
 * service's, which the first start creates and names in its log, as it does the mail simulator's.
 * On the same database as a deployment of its own, no demo secret is taken or works.
 */
class SecondInstanceIT {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final List<Process> processes = new ArrayList<>();
  private Path dataDir;
  private Path logs;

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroy(); // SIGTERM: the service stops its embedded PostgreSQL on the way out
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
      }
    }
    if (dataDir != null) {
      HttpTestSupport.deleteTree(dataDir);
    }
  }

  @Test
  void aSecondInstanceOnTheSameFolderSaysSoAndTheReadmeLineShares() throws Exception {
    assertThat(ServiceProcesses.JAR).as("the packaged service").exists();
    dataDir = Files.createTempDirectory("second-instance-pg");
    logs = Files.createDirectories(Path.of("target", "service-logs"));

    int first = portWithFreeNeighbour();
    start("first", first, "--idemkit.embedded.data-dir=" + dataDir);
    awaitHealthy("first", first);
    String firstLog = Files.readString(logs.resolve("first.log"));
    assertThat(firstLog)
        .contains(
            "Provider simulator (demo mode) on http://127.0.0.1:"
                + (first + 1)
                + ", database postgres_provider")
        // A fresh server: the demo says which databases of its own it made there.
        .contains(
            "Created database postgres_provider on the service's PostgreSQL for the provider"
                + " simulator (demo mode: payments.provider.url is not set)")
        .contains(
            "Created database postgres_mail on the service's PostgreSQL for the mail simulator"
                + " (demo mode: payments.mail.url is not set)");
    String paymentId = createPayment(first);

    Process clash = start("clash", freePort(), "--idemkit.embedded.data-dir=" + dataDir);
    assertThat(clash.waitFor(120, TimeUnit.SECONDS)).as("the second instance stops").isTrue();
    assertThat(clash.exitValue()).isNotZero();
    String pgPort = Files.readAllLines(dataDir.resolve("postmaster.pid")).get(3).trim();
    String clashLog = Files.readString(logs.resolve("clash.log"));
    assertThat(clashLog)
        .contains(
            "The embedded database folder "
                + dataDir
                + " is in use by another running instance (its PostgreSQL listens on port "
                + pgPort
                + ").")
        .contains("To share its database, start this one with --idemkit.embedded.join=true")
        .doesNotContain("\tat io.zonky");

    // docs/operations.md's line: the second instance joins the first one's server, as the same
    // demo.
    int second = freePort();
    start(
        "second", second, "--idemkit.embedded.data-dir=" + dataDir, "--idemkit.embedded.join=true");
    awaitHealthy("second", second);
    HttpResponse<String> seen =
        HttpTestSupport.send(
            HttpRequest.newBuilder(uri(second, "/v1/payments/" + paymentId))
                .header("Authorization", "Bearer " + HttpTestSupport.TENANT_A)
                .build());
    assertThat(seen.statusCode()).as(seen.body()).isEqualTo(200);
    assertThat(Files.readString(logs.resolve("second.log")))
        .contains("database postgres_provider")
        .contains("the embedded PostgreSQL of another instance on port " + pgPort)
        .doesNotContain("127.0.0.1:8081");

    // A deployment's own database on the same server (not the demo): no demo secret works or is
    // taken.
    String password = Files.readString(dataDir.resolve("idemkit-app.password")).trim();
    try (Connection c =
            DriverManager.getConnection(
                "jdbc:postgresql://localhost:" + pgPort + "/postgres", "idemkit", password);
        Statement s = c.createStatement()) {
      s.execute("create database own_deployment");
    }
    String url = "jdbc:postgresql://localhost:" + pgPort + "/own_deployment";
    List<String> own =
        new ArrayList<>(
            List.of(
                "--spring.datasource.url=" + url,
                "--spring.datasource.username=idemkit",
                "--spring.datasource.password=" + password,
                "--payments.provider.embedded-port=0",
                "--payments.mail.embedded-port=0",
                "--idemkit.issued-keys.secret=a-secret-of-this-deployment",
                "--payments.api-keys.sk_live_own=tenant_own"));
    own.addAll(
        ServiceProcesses.ownSecrets().stream()
            .filter(arg -> arg.startsWith("--idemkit.protection."))
            .toList());
    Process refused =
        start(
            "refused",
            freePort(),
            concat(own, "--payments.demo.admin-api-keys.sk_test_admin=demo_operator"));
    assertThat(refused.waitFor(120, TimeUnit.SECONDS)).as("refuses to start").isTrue();
    assertThat(refused.exitValue()).isNotZero();
    assertThat(Files.readString(logs.resolve("refused.log")))
        .contains(
            "Refusing to start outside the embedded demo:"
                + " payments.demo.admin-api-keys.sk_test_admin is a demo API key")
        .doesNotContain("\tat ");

    int deployment = freePort();
    start("deployment", deployment, own.toArray(String[]::new));
    awaitHealthy("deployment", deployment);
    for (String path :
        List.of(
            "/v1/admin/idempotency/recovery",
            "/v1/admin/idempotency/records/tenant_demo_a/create_payment?key=x",
            "/actuator/prometheus",
            "/actuator/metrics")) {
      HttpResponse<String> admin =
          HttpTestSupport.send(
              HttpRequest.newBuilder(uri(deployment, path))
                  .header("Authorization", "Bearer sk_test_admin")
                  .build());
      assertThat(admin.statusCode()).as(path + ": " + admin.body()).isIn(401, 403);
    }
    HttpResponse<String> demoTenant =
        HttpTestSupport.send(
            HttpRequest.newBuilder(uri(deployment, "/v1/payments/" + paymentId))
                .header("Authorization", "Bearer " + HttpTestSupport.TENANT_A)
                .build());
    assertThat(demoTenant.statusCode()).isEqualTo(401);
  }

  private static String[] concat(List<String> args, String more) {
    List<String> all = new ArrayList<>(args);
    all.add(more);
    return all.toArray(String[]::new);
  }

  private Process start(String name, int port, String... extra) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-jar",
                ServiceProcesses.JAR.toString(),
                "--server.port=" + port,
                "--spring.jmx.enabled=false"));
    command.addAll(List.of(extra));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(logs.resolve(name + ".log").toFile())
            .start();
    processes.add(process);
    return process;
  }

  private void awaitHealthy(String name, int port) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (true) {
      try {
        HttpResponse<String> health =
            HttpTestSupport.HTTP.send(
                HttpRequest.newBuilder(uri(port, "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (health.body().contains("\"UP\"")) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      assertThat(System.nanoTime())
          .as(name + " did not start in 180 s; see target/service-logs/" + name + ".log")
          .isLessThan(deadline);
      Thread.sleep(250);
    }
  }

  private String createPayment(int port) {
    HttpResponse<String> created =
        HttpTestSupport.send(
            HttpTestSupport.request(
                    uri(port, "/v1/payments"),
                    Map.of(
                        "Authorization",
                        "Bearer " + HttpTestSupport.TENANT_A,
                        "Content-Type",
                        "application/json",
                        "Idempotency-Key",
                        HttpTestSupport.newKey()))
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        HttpTestSupport.payment("second-" + HttpTestSupport.newKey(), "10.00")))
                .build());
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    return JSON.readTree(created.body()).get("paymentId").asString();
  }

  private static URI uri(int port, String path) {
    return URI.create("http://localhost:" + port + path);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A free port whose successor is free too, for the simulator that follows the service. */
  private static int portWithFreeNeighbour() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int port = freePort();
      if (port < 65535) {
        try (ServerSocket next = new ServerSocket(port + 1)) {
          return port;
        } catch (IOException taken) {
          // try another
        }
      }
    }
    throw new IOException("no two consecutive free ports");
  }
}
