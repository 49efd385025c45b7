package dev.idemkit.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The real payments service, run as a separate process from its jar ({@code java -jar
 * payments-service.jar}) on a free port and an embedded PostgreSQL in a fresh directory. Tests
 * count payments, and the provider's charges, in that server's databases.
 *
 * <p>Shared with idemkit-conformance's integration test through this module's test jar, which holds
 * this class only. A module that uses it needs the PostgreSQL driver and a test-scoped dependency
 * on {@code payments-service}, which builds the service's jar first and puts it on the test class
 * path, where this class finds it.
 */
public final class PaymentsServiceProcess implements AutoCloseable {

  /** A demo merchant's API key (the service's demo mode knows it). */
  public static final String API_KEY = "sk_test_demo_a";

  /** The database the embedded demo gives the service. */
  private static final String DATABASE_NAME = "postgres";

  private static final Pattern DATABASE =
      Pattern.compile("Database: embedded PostgreSQL on port (\\d+), data in");

  private final Process process;
  private final int port;
  private final Path dataDir;
  private final List<String> output = new CopyOnWriteArrayList<>();
  private volatile int databasePort;

  private PaymentsServiceProcess(Process process, int port, Path dataDir) {
    this.process = process;
    this.port = port;
    this.dataDir = dataDir;
  }

  /** Starts the service and waits until {@code /actuator/health} is UP. */
  public static PaymentsServiceProcess start() throws IOException, InterruptedException {
    Path jar = serviceJar();
    int port = freePort();
    Path dataDir = Files.createTempDirectory("payments-service-it-pg");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder pb =
        new ProcessBuilder(
                java.toString(),
                "-Xmx512m",
                "-jar",
                jar.toString(),
                "--server.port=" + port,
                "--idemkit.embedded.data-dir=" + dataDir,
                // The in-process provider simulator on any free port, not 8081.
                "--payments.provider.embedded-port=0",
                // and the mail simulator, not 8082.
                "--payments.mail.embedded-port=0",
                "--logging.level.root=warn",
                // The start-up banner names the embedded database's port.
                "--logging.level.dev.idemkit.examples.payments.web.StartupBanner=info")
            .redirectErrorStream(true);
    System.out.println("[payments-service] starting " + jar + " on port " + port);
    PaymentsServiceProcess service = new PaymentsServiceProcess(pb.start(), port, dataDir);
    service.pumpOutput();
    try {
      service.awaitHealthy(Duration.ofMinutes(6)); // generous: a loaded CI machine
    } catch (RuntimeException | InterruptedException e) {
      service.close();
      throw e;
    }
    return service;
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + port);
  }

  public int port() {
    return port;
  }

  /** The service's own database on the embedded server ({@code postgres}). */
  public String jdbcUrl() {
    return "jdbc:postgresql://localhost:" + databasePort + "/" + DATABASE_NAME;
  }

  /**
   * The in-process provider simulator's database: the service's database name with {@code
   * _provider} ({@code postgres_provider}), beside the service's on the same server.
   */
  public String providerJdbcUrl() {
    return "jdbc:postgresql://localhost:" + databasePort + "/" + DATABASE_NAME + "_provider";
  }

  /**
   * A connection to {@code url} on the service's embedded server, as the service logs in: its role
   * {@code idemkit} with the password the server keeps in its data directory (no login works
   * without one).
   */
  public Connection connect(String url) throws SQLException {
    try {
      return DriverManager.getConnection(
          url, "idemkit", Files.readString(dataDir.resolve("idemkit-app.password")).trim());
    } catch (IOException e) {
      throw new SQLException("No password in " + dataDir, e);
    }
  }

  /** Rows of {@code payment} whose merchant reference matches a SQL {@code LIKE} pattern. */
  public long payments(String merchantReferenceLike) {
    String url = jdbcUrl();
    try (Connection c = connect(url);
        PreparedStatement s =
            c.prepareStatement("select count(*) from payment where merchant_reference like ?")) {
      s.setString(1, merchantReferenceLike);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not count payments in " + url, e);
    }
  }

  /**
   * Successful charges at the payment provider (the service's in-process simulator, which keeps
   * them in its own database {@code postgres_provider} beside the service's) for these payment ids.
   */
  public long providerCharges(Collection<String> paymentIds) {
    String url = providerJdbcUrl();
    try (Connection c = connect(url);
        PreparedStatement s =
            c.prepareStatement(
                "select count(*) from provider_charge where status = 'SUCCEEDED' and reference = any(?)")) {
      s.setArray(1, c.createArrayOf("text", paymentIds.toArray()));
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not count provider charges in " + url, e);
    }
  }

  /** Stops the service gracefully (its embedded PostgreSQL with it), then removes its data. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      System.out.println("[payments-service] could not remove " + dataDir + ": " + e);
    }
    System.out.println("[payments-service] stopped");
  }

  private void pumpOutput() {
    Thread pump =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  output.add(line);
                  System.out.println("[payments-service] " + line);
                  Matcher m = DATABASE.matcher(line);
                  if (m.find()) {
                    databasePort = Integer.parseInt(m.group(1));
                  }
                }
              } catch (IOException e) {
                // The process ended.
              }
            },
            "payments-service-output");
    pump.setDaemon(true);
    pump.start();
  }

  private void awaitHealthy(Duration timeout) throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health =
        HttpRequest.newBuilder(uri().resolve("/actuator/health"))
            .timeout(Duration.ofSeconds(5))
            .build();
    long start = System.nanoTime();
    long lastReport = start;
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the payments service exited with "
                + process.exitValue()
                + ":\n"
                + String.join("\n", output));
      }
      try {
        HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200 && r.body().contains("\"UP\"") && databasePort > 0) {
          System.out.printf(
              "[payments-service] UP on port %d after %d s; database on port %d%n",
              port, Duration.ofNanos(System.nanoTime() - start).toSeconds(), databasePort);
          return;
        }
      } catch (IOException notYet) {
        // Not listening yet.
      }
      long now = System.nanoTime();
      if (Duration.ofNanos(now - start).compareTo(timeout) > 0) {
        throw new IllegalStateException(
            "the payments service was not UP within "
                + timeout
                + ":\n"
                + String.join("\n", output));
      }
      if (Duration.ofNanos(now - lastReport).toSeconds() >= 5) {
        lastReport = now;
        System.out.printf(
            "[payments-service] waiting for /actuator/health on port %d: %d s%n",
            port, Duration.ofNanos(now - start).toSeconds());
      }
      Thread.sleep(250);
    }
  }

  /**
   * The service's jar: the one Maven resolved for this module's test-scoped dependency (so the
   * reactor built it first), else {@code examples/payments-service/target/payments-service.jar}.
   */
  private static Path serviceJar() {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path", ""));
    for (String entry : classpath.split(File.pathSeparator)) {
      Path p = Path.of(entry);
      String name = p.getFileName() == null ? "" : p.getFileName().toString();
      if (name.startsWith("payments-service") && name.endsWith(".jar") && Files.isRegularFile(p)) {
        return p;
      }
    }
    String fallback = System.getProperty("idemkit.payments-service.jar");
    if (fallback != null && Files.isRegularFile(Path.of(fallback))) {
      return Path.of(fallback);
    }
    throw new IllegalStateException(
        "the payments service jar is missing (looked on the test class path and at "
            + fallback
            + "). Build it first: ./mvnw -q -pl examples/payments-service -am package -DskipTests");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
