package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service as the README starts it (the packaged jar, embedded PostgreSQL, embedded provider),
 * killed with {@code kill -9}: its PostgreSQL outlives it and holds the data directory. The next
 * start with the same command must come up the first time, with the data.
 */
class EmbeddedRestartAfterCrashIT {

  private static final Path JAR = Path.of("target/payments-service.jar");
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * Generous: a loaded build machine starts the jar slowly; the bug was a start that never came.
   */
  private static final Duration STARTUP = Duration.ofSeconds(240);

  @TempDir Path dir;

  private record Started(Process process, int port) {
    URI uri(String path) {
      return URI.create("http://localhost:" + port + path);
    }
  }

  private Started start(String name, Path data) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path log = Files.createDirectories(Path.of("target", "service-logs")).resolve(name + ".log");
    Process process =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-jar",
                JAR.toString(),
                "--server.port=" + port,
                "--payments.provider.embedded-port=0",
                "--idemkit.embedded.data-dir=" + data,
                "--spring.jmx.enabled=false")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    Started started = new Started(process, port);
    long deadline = System.nanoTime() + STARTUP.toNanos();
    while (true) {
      assertThat(process.isAlive())
          .as("%s died at start-up:%n%s", name, Files.readString(log))
          .isTrue();
      try {
        HttpResponse<String> health =
            HTTP.send(
                HttpRequest.newBuilder(started.uri("/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (health.body().contains("\"UP\"")) {
          return started;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      assertThat(System.nanoTime())
          .as("%s did not start in %s:%n%s", name, STARTUP, Files.readString(log))
          .isLessThan(deadline);
      Thread.sleep(200);
    }
  }

  @Test
  void aRestartAfterKill9StartsTheFirstTimeWithTheData() throws Exception {
    assertThat(JAR).as("the packaged service (mvn package runs before the ITs)").exists();
    Path data = dir.resolve("postgres");
    Started first = start("crash-restart-first", data);
    String location;
    long orphanPid;
    try {
      HttpResponse<String> created =
          HTTP.send(
              HttpRequest.newBuilder(first.uri("/v1/payments"))
                  .header("Authorization", "Bearer sk_test_demo_a")
                  .header("Idempotency-Key", UUID.randomUUID().toString())
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          HttpTestSupport.payment("restart-" + UUID.randomUUID(), "10.00")))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      location = created.headers().firstValue("Location").orElseThrow();
      orphanPid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
    } finally {
      first.process().destroyForcibly(); // kill -9
      assertThat(first.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    Optional<ProcessHandle> orphan = ProcessHandle.of(orphanPid);
    Started second = null;
    try {
      assertThat(orphan.map(ProcessHandle::isAlive))
          .as("the embedded PostgreSQL outlived the killed service")
          .hasValue(true);

      second = start("crash-restart-second", data);

      HttpResponse<String> payment =
          HTTP.send(
              HttpRequest.newBuilder(second.uri(URI.create(location).getPath()))
                  .header("Authorization", "Bearer sk_test_demo_a")
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(payment.statusCode()).as(payment.body()).isEqualTo(200);
      assertThat(orphan.get().isAlive()).as("the orphan was stopped").isFalse();
    } finally {
      if (second != null) {
        second.process().destroy(); // a clean stop also stops its PostgreSQL
        if (!second.process().waitFor(60, TimeUnit.SECONDS)) {
          second.process().destroyForcibly();
        }
      }
      orphan.filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroyForcibly);
      Path pid = data.resolve("postmaster.pid");
      if (Files.exists(pid)) {
        ProcessHandle.of(Long.parseLong(Files.readAllLines(pid).get(0).trim()))
            .filter(ProcessHandle::isAlive)
            .ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }
}
