package dev.idemkit.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/** The payments service jar in its own JVM, with its embedded PostgreSQL. */
final class PaymentsServiceProcess {
  final Process process;
  private final Path dataDir;
  private final Path log;
  private final AtomicBoolean stopped = new AtomicBoolean();

  private PaymentsServiceProcess(Process process, Path dataDir, Path log) {
    this.process = process;
    this.dataDir = dataDir;
    this.log = log;
  }

  static PaymentsServiceProcess start(
      Path jar, int port, Path dataDir, Path log, List<String> jvmArgs, List<String> extra)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java));
    command.addAll(jvmArgs);
    command.addAll(
        List.of(
            "-jar",
            jar.toAbsolutePath().toString(),
            "--server.port=" + port,
            "--server.address=127.0.0.1",
            "--spring.profiles.active=bench",
            "--idemkit.embedded.data-dir=" + dataDir,
            "--logging.level.root=warn"));
    command.addAll(extra);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    return new PaymentsServiceProcess(builder.start(), dataDir, log);
  }

  void awaitHealthy(int port, Duration timeout) throws Exception {
    HttpClient client = client();
    HttpRequest health =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
            .timeout(Duration.ofSeconds(5))
            .GET()
            .build();
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    long nextReport = start + TimeUnit.SECONDS.toNanos(5);
    String last = "no answer yet";
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the service exited with status " + process.exitValue() + " before it was UP");
      }
      try {
        HttpResponse<String> r = client.send(health, HttpResponse.BodyHandlers.ofString());
        last = r.statusCode() + " " + r.body();
        if (r.statusCode() == 200 && r.body().contains("\"status\":\"UP\"")) {
          System.out.printf(
              "  service UP after %.1f s (pid %d)%n",
              (System.nanoTime() - start) / 1e9, process.pid());
          return;
        }
      } catch (IOException notYet) {
        last = notYet.getClass().getSimpleName();
      }
      if (System.nanoTime() >= nextReport) {
        System.out.printf(
            "  waiting for /actuator/health: %.0f s (%s)%n",
            (System.nanoTime() - start) / 1e9, last);
        nextReport += TimeUnit.SECONDS.toNanos(5);
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException("the service was not UP after " + timeout + ": " + last);
  }

  long cpuNanos() {
    return cpuNanos(process.toHandle());
  }

  /** The postmaster and every backend it has now. */
  long postgresCpuNanos() {
    return postmaster()
        .map(
            pm -> cpuNanos(pm) + pm.descendants().mapToLong(PaymentsServiceProcess::cpuNanos).sum())
        .orElse(0L);
  }

  private static long cpuNanos(ProcessHandle p) {
    return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }

  /** Stops the service (SIGTERM, then SIGKILL) and any PostgreSQL it left running. */
  void stop() {
    if (!stopped.compareAndSet(false, true)) {
      return;
    }
    List<ProcessHandle> children = process.descendants().toList();
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    postmaster().filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroy);
  }

  /** The embedded PostgreSQL's postmaster, from its pid file, if there is one. */
  private Optional<ProcessHandle> postmaster() {
    try (Stream<Path> files = Files.walk(dataDir, 2)) {
      return files
          .filter(f -> f.getFileName().toString().equals("postmaster.pid"))
          .findFirst()
          .flatMap(
              f -> {
                try {
                  return ProcessHandle.of(Long.parseLong(Files.readAllLines(f).get(0).trim()));
                } catch (Exception e) {
                  return Optional.empty();
                }
              });
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  void printLogTail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      System.err.println("--- last lines of the service log " + log + " ---");
      all.subList(Math.max(0, all.size() - lines), all.size()).forEach(System.err::println);
    } catch (IOException e) {
      System.err.println("(no service log: " + e.getMessage() + ")");
    }
  }

  /**
   * Where one benchmark's service runs ({@code bench}: its name, as in {@code bench/<name>}): a
   * free port, a fresh directory for its embedded PostgreSQL and a file for its log.
   */
  record Scratch(String bench, int port, Path dataDir, Path log) {
    static Scratch create(String bench) throws IOException {
      return new Scratch(
          bench,
          freePort(),
          Files.createTempDirectory("idemkit-bench-" + bench + "-pg"),
          Files.createTempFile("idemkit-bench-" + bench + "-service", ".log"));
    }

    /** A copy of the service's jar for this run, so that a build meanwhile does not change it. */
    Path copyOf(Path jar) throws IOException {
      Path copy = Files.createTempFile("idemkit-bench-" + bench + "-service", ".jar");
      Files.copy(jar, copy, StandardCopyOption.REPLACE_EXISTING);
      return copy;
    }
  }

  /** An HTTP/1.1 client for the service, as the benchmarks' clients talk to it. */
  static HttpClient client() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  static void deleteQuietly(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files
          .sorted(Comparator.reverseOrder())
          .forEach(
              f -> {
                try {
                  Files.deleteIfExists(f);
                } catch (IOException ignored) {
                  // best effort
                }
              });
    } catch (IOException ignored) {
      // best effort
    }
  }
}
