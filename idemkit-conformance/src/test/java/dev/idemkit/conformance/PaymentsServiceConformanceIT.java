package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.PaymentsServiceProcess;
import dev.idemkit.client.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged checker ({@code java -jar idemkit-conformance.jar}) against the packaged payments
 * service: every check of the {@code ietf} profile passes, and under {@code stripe} only the
 * profile's conventions differ, with effects counted through the service's own list endpoint
 * ({@code GET /v1/payments?merchantReference=…}, the tenant's payments with a merchant reference),
 * the command docs/proof.md shows.
 */
class PaymentsServiceConformanceIT {

  /**
   * The {@code ietf} profile's checks and what the service must get for each: a pass (a decline,
   * too, is stored and replayed, as the draft's refusals are).
   */
  private static final Map<String, String> EXPECTED = expected();

  private static PaymentsServiceProcess service;

  @TempDir Path reports;

  @BeforeAll
  static void start() throws Exception {
    service = PaymentsServiceProcess.start();
  }

  @AfterAll
  static void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void thePaymentsServicePassesEveryIetfCheck() throws Exception {
    Path json = reports.resolve("payments.json");
    Path junit = reports.resolve("payments.xml");
    Checked run = runChecker(json, junit, "ietf");

    assertThat(run.exit()).as(run.output()).isZero();
    // Every check of the profile, by id: each passed, a decline replayed as the draft wants.
    assertThat(statusById(json)).as(run.output()).isEqualTo(EXPECTED);
    assertThat(Files.readString(junit))
        .contains("tests=\"22\" failures=\"0\" errors=\"0\" skipped=\"0\"");
    assertEveryCompletedPaymentChargedOnce();
  }

  /**
   * Under {@code stripe}, the service keeps every guarantee (no check says it violates one); where
   * it answers by the draft's conventions instead of Stripe's (a 422 for a reused key, its own
   * error codes), the report says it differs from the profile, and {@code --fail-on guarantee}
   * passes the run.
   */
  @Test
  void underStripeOnlyConventionsDifferAndTheGuaranteeHolds() throws Exception {
    Path json = reports.resolve("payments-stripe.json");
    Path junit = reports.resolve("payments-stripe.xml");
    Checked run = runChecker(json, junit, "stripe", "--fail-on", "guarantee");

    assertThat(run.exit()).as(run.output()).isZero();
    Map<String, String> breaches = breachById(json);
    assertThat(breaches).as(run.output()).doesNotContainValue("guarantee");
    // A reused key is the draft's 422 here, Stripe's 400 there.
    assertThat(breaches).as(run.output()).containsEntry("mismatch.body", "convention");
    assertThat(run.output())
        .contains("differ from the stripe profile's conventions: ")
        .doesNotContain("violates the idempotency guarantee");
    assertEveryCompletedPaymentChargedOnce();
  }

  private record Checked(int exit, String output) {}

  private static Checked runChecker(Path json, Path junit, String profile, String... more)
      throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                conformanceJar().toString(),
                "--profile",
                profile,
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
                // The tenant's payments with the check's merchant reference: a JSON array,
                // counted by its length.
                "--effect-url",
                "/v1/payments?merchantReference={{unique}}",
                "--json",
                json.toString(),
                "--junit",
                junit.toString()));
    command.addAll(List.of(more));
    Process checker = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(checker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(checker.waitFor(5, TimeUnit.MINUTES)).isTrue();
    System.out.println(output);
    return new Checked(checker.exitValue(), output);
  }

  /**
   * Across everything the checker did, the provider charged each completed payment exactly once,
   * and no payment twice.
   */
  private static void assertEveryCompletedPaymentChargedOnce() throws Exception {
    List<String> completed = completedPayments();
    assertThat(completed).isNotEmpty();
    assertThat(service.providerCharges(completed)).isEqualTo(completed.size());
    assertThat(duplicateCharges()).isZero();
  }

  /** Each failed check's breach in the JSON report ({@code guarantee} or {@code convention}). */
  private static Map<String, String> breachById(Path json) throws IOException {
    Map<String, String> breaches = new LinkedHashMap<>();
    for (Map<String, Object> check : checks(json)) {
      if (check.containsKey("breach")) {
        breaches.put((String) check.get("id"), (String) check.get("breach"));
      }
    }
    return breaches;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> checks(Path json) throws IOException {
    return (List<Map<String, Object>>)
        ((Map<String, Object>) Json.parse(Files.readString(json))).get("checks");
  }

  /** Each check's status in the JSON report, by check id, in report order. */
  private static Map<String, String> statusById(Path json) throws IOException {
    Map<String, String> statuses = new LinkedHashMap<>();
    for (Map<String, Object> check : checks(json)) {
      statuses.put((String) check.get("id"), (String) check.get("status"));
    }
    return statuses;
  }

  private static List<String> completedPayments() throws Exception {
    try (Connection c = service.connect(service.jdbcUrl());
        PreparedStatement s =
            c.prepareStatement("select id::text from payment where status = 'COMPLETED'")) {
      List<String> ids = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getString(1));
        }
      }
      return ids;
    }
  }

  private static long duplicateCharges() throws Exception {
    try (Connection c = service.connect(service.providerJdbcUrl());
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

  private static Map<String, String> expected() {
    Map<String, String> expected = new LinkedHashMap<>();
    for (String id :
        List.of(
            "key.form",
            "key.missing",
            "key.empty",
            "key.too-long",
            "key.control-char",
            "key.non-ascii",
            "key.bad-quoting",
            "key.two-headers",
            "key.max-length",
            "key.forms",
            "replay.completed",
            "effect.exactly-one",
            "mismatch.body",
            "mismatch.path",
            "concurrent.duplicates",
            "inflight.duplicate",
            "inflight.mismatch",
            "conflict.retry-after",
            "scope.principal",
            "errors.replay",
            "errors.validation-not-stored",
            "lost-answer.retry")) {
      expected.put(id, "PASS");
    }
    return expected;
  }

  private static Path conformanceJar() {
    Path jar =
        Path.of(System.getProperty("idemkit.conformance.jar", "target/idemkit-conformance.jar"));
    assertThat(jar).as("the packaged checker (package runs before the ITs)").exists();
    return jar.toAbsolutePath();
  }
}
