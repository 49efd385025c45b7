package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.FlawedServer.Flaw;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The checker against servers with one known idempotency bug each: every bug is caught, by the
 * check made for it, and a correct server passes every check.
 */
class BrokenServersTest {

  @TempDir Path reports;

  record Run(
      int exit, String stdout, Set<String> failed, Set<String> passed, String json, String junit) {}

  private Run check(Flaw flaw) throws Exception {
    return check(flaw, "/effects?ref={{unique}}");
  }

  private Run check(Flaw flaw, String effectUrl, String... more) throws Exception {
    try (FlawedServer server = new FlawedServer(flaw, 300)) {
      List<String> args = new ArrayList<>(List.of("--profile", "ietf", "--effect-url", effectUrl));
      args.addAll(List.of(more));
      return check(server, reports, flaw.toString(), args);
    }
  }

  /**
   * Runs the checker in this JVM against {@code server}'s {@code POST /items} with the request
   * templates every check needs, the effect count in {@code GET /effects}'s {@code count}, and
   * {@code more} options (a profile, an effect URL, …); reads back its JSON and JUnit reports.
   */
  static Run check(FlawedServer server, Path reports, String name, List<String> more)
      throws Exception {
    Path json = reports.resolve(name + ".json");
    Path junit = reports.resolve(name + ".xml");
    List<String> args =
        new ArrayList<>(
            List.of(
                "--base-url", server.baseUrl(),
                "--path", "/items",
                "--body", "{\"ref\":\"{{unique}}\",\"amount\":\"10.00\"}",
                "--mismatch-body", "{\"ref\":\"{{unique}}\",\"amount\":\"99.00\"}",
                "--other-path", "/other",
                "--invalid-body", "{\"ref\":\"{{unique}}\",\"amount\":\"ten\"}",
                "--error-body", "{\"ref\":\"{{unique}}\",\"amount\":\"decline\"}",
                "--auth", "Bearer tenant-a",
                "--auth2", "Bearer tenant-b",
                "--effect-url", "/effects?ref={{unique}}",
                "--effect-count", "count",
                "--inflight-delay-ms", "100",
                "--json", json.toString(),
                "--junit", junit.toString()));
    // Later options win: a caller's --effect-url replaces the default one.
    args.addAll(more);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit =
        ConformanceMain.run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            System.err);
    String stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println("---- " + name + "\n" + stdout);
    String report = Files.readString(json);
    Set<String> failed = new TreeSet<>();
    Set<String> passed = new TreeSet<>();
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> checks =
        (List<Map<String, Object>>) ((Map<String, Object>) Json.parse(report)).get("checks");
    for (Map<String, Object> c : checks) {
      if ("FAIL".equals(c.get("status"))) {
        failed.add((String) c.get("id"));
      } else if ("PASS".equals(c.get("status"))) {
        passed.add((String) c.get("id"));
      }
    }
    return new Run(exit, stdout, failed, passed, report, Files.readString(junit));
  }

  @Test
  void aCorrectServerPassesEveryCheck() throws Exception {
    Run run = check(Flaw.NONE);

    assertThat(run.failed()).isEmpty();
    assertThat(run.exit()).isZero();
    // Every check ran conclusively; only the error-replay policy is reported, not judged.
    assertThat(run.passed()).hasSize(20).doesNotContain("errors.replay");
    assertThat(run.stdout()).contains("INFO  errors.replay").contains("got it replayed");
    assertThat(run.junit()).contains("tests=\"21\" failures=\"0\"");
  }

  /**
   * The effect URL is the user's oracle, not the endpoint under test: when it drops the connection,
   * the report says so, instead of reading like the endpoint closed without an answer.
   */
  @Test
  void anEffectUrlThatGivesNoAnswerIsNamedInTheReport() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread dropper =
          new Thread(
              () -> {
                while (true) {
                  try (Socket dropped = silent.accept()) {
                    // Closed without a word.
                  } catch (IOException closed) {
                    return;
                  }
                }
              });
      dropper.setDaemon(true);
      dropper.start();
      String effectUrl = "http://127.0.0.1:" + silent.getLocalPort() + "/effects?ref={{unique}}";

      Run run = check(Flaw.NONE, effectUrl, "--only", "key.missing");

      assertThat(run.failed()).containsExactly("key.missing");
      assertThat(run.stdout())
          .contains("the effect URL http://127.0.0.1:" + silent.getLocalPort() + "/effects?ref=")
          .contains("gave no answer");
    }
  }

  static List<Arguments> flaws() {
    List<Arguments> cases = new ArrayList<>();
    cases.add(Arguments.of(Flaw.FIND_THEN_INSERT, Set.of("concurrent.duplicates")));
    cases.add(Arguments.of(Flaw.NO_FINGERPRINT, Set.of("mismatch.body")));
    cases.add(
        Arguments.of(
            Flaw.REPLAYS_DIFFERENT_BYTES,
            Set.of("replay.completed", "concurrent.duplicates", "lost-answer.retry")));
    cases.add(Arguments.of(Flaw.KEYS_NOT_SCOPED_BY_PRINCIPAL, Set.of("scope.principal")));
    cases.add(
        Arguments.of(
            Flaw.IN_PROGRESS_NOT_DETECTED,
            Set.of("inflight.duplicate", "inflight.mismatch", "concurrent.duplicates")));
    return cases;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flaws")
  void eachBrokenServerFailsTheCheckMadeForItsBug(Flaw flaw, Set<String> expected)
      throws Exception {
    Run run = check(flaw);

    assertThat(run.exit()).as("exit status").isEqualTo(1);
    // Exactly the checks made for this bug, and no others.
    assertThat(run.failed()).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(run.junit()).contains("<failure");
    for (String id : expected) {
      assertThat(run.junit()).contains("name=\"" + id + "\"");
    }
  }
}
