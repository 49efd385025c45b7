package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.FlawedServer.Flaw;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
      int exit,
      String stdout,
      String stderr,
      Set<String> failed,
      Set<String> passed,
      String json,
      String junit) {

    /** Each check's status in the JSON report, by check id, in report order. */
    Map<String, String> statuses() {
      Map<String, String> statuses = new LinkedHashMap<>();
      for (Map<String, Object> check : checks()) {
        statuses.put((String) check.get("id"), (String) check.get("status"));
      }
      return statuses;
    }

    /** The failed checks the report says violate the idempotency guarantee. */
    Set<String> violated() {
      return breached("guarantee");
    }

    /** The failed checks the report says only differ from the profile's conventions. */
    Set<String> differing() {
      return breached("convention");
    }

    private Set<String> breached(String breach) {
      Set<String> ids = new TreeSet<>();
      for (Map<String, Object> check : checks()) {
        if (breach.equals(check.get("breach"))) {
          ids.add((String) check.get("id"));
        }
      }
      return ids;
    }

    /** What the report says a check saw. */
    String detail(String id) {
      for (Map<String, Object> check : checks()) {
        if (id.equals(check.get("id"))) {
          return (String) check.get("detail");
        }
      }
      throw new AssertionError("no check " + id + " in the report");
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> checks() {
      return (List<Map<String, Object>>) ((Map<String, Object>) Json.parse(json)).get("checks");
    }
  }

  private Run check(Flaw flaw) throws Exception {
    try (FlawedServer server = new FlawedServer(flaw, 300)) {
      return check(server, reports, flaw.toString(), List.of("--profile", "ietf"));
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
    // Later options win: a caller's --profile or --effect-url replaces the default one.
    args.addAll(more);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        ConformanceMain.run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String stdout = out.toString(StandardCharsets.UTF_8);
    String stderr = err.toString(StandardCharsets.UTF_8);
    System.out.println("---- " + name + "\n" + stderr + stdout);
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
    return new Run(exit, stdout, stderr, failed, passed, report, Files.readString(junit));
  }

  @Test
  void aCorrectServerPassesEveryCheck() throws Exception {
    Run run = check(Flaw.NONE);

    assertThat(run.failed()).isEmpty();
    assertThat(run.exit()).isZero();
    // Every check ran conclusively, the decline replayed as the draft wants it (one declined
    // record before and after the retry).
    assertThat(run.passed()).hasSize(22);
    assertThat(run.detail("errors.replay"))
        .contains("got it replayed")
        .contains("1 effect before and after the retry");
    assertThat(run.junit()).contains("tests=\"22\" failures=\"0\"");
  }

  /**
   * A duplicate that slips past a find-then-insert and is stopped by the business table's unique
   * reference gets that table's 409: one effect, but not an in-progress answer, so the client may
   * take its operation for refused. Under plain {@code ietf} any 409 is the draft's in-progress
   * status, and the server is caught by the missing {@code Retry-After}; a profile that demands the
   * draft's problem description (or an in-progress code, ProfilesTest) tells the business 409
   * apart, and the race checks fail it.
   */
  @Test
  void aBusinessConflictForADuplicateIsNotAnInProgressAnswer() throws Exception {
    Run plain = check(Flaw.BUSINESS_CONFLICT_ON_DUPLICATE);
    assertThat(plain.exit()).isEqualTo(1);
    assertThat(plain.failed()).containsExactly("conflict.retry-after");

    Path file = reports.resolve("ietf-problem.properties");
    Files.writeString(file, "base=ietf\nname=ietf-problem\nin-progress-problem=true\n");
    Run run;
    try (FlawedServer server = new FlawedServer(Flaw.BUSINESS_CONFLICT_ON_DUPLICATE, 300)) {
      run = check(server, reports, "business-conflict", List.of("--profile", file.toString()));
    }

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.failed())
        .containsExactlyInAnyOrder(
            "concurrent.duplicates", "inflight.duplicate", "inflight.mismatch");
    for (String id : run.failed()) {
      assertThat(run.detail(id)).as(id).contains("409 {\"errorCode\":\"REFERENCE_ALREADY_USED\"}");
    }
    // The seven that lost the race got the business 409, and the report says what it is not.
    assertThat(run.detail("concurrent.duplicates"))
        .contains("1 success, 0 in progress")
        .contains(
            "7 × 409 {\"errorCode\":\"REFERENCE_ALREADY_USED\"}: not the ietf-problem profile's"
                + " in-progress answer (neither application/problem+json nor a Link"
                + " rel=describedby)");
    // Not an answer in the profile's form, but every client that retried got the one answer.
    assertThat(run.violated()).isEmpty();
    assertThat(run.differing()).isEqualTo(run.failed());
    // The database kept it to one effect: no check blames effects.
    assertThat(run.detail("concurrent.duplicates")).doesNotContain("effects");
    // No in-progress answer was seen, so there is no Retry-After to judge.
    assertThat(run.statuses()).containsEntry("conflict.retry-after", "SKIP");
  }

  static List<Arguments> flaws() {
    List<Arguments> cases = new ArrayList<>();
    cases.add(Arguments.of(Flaw.FIND_THEN_INSERT, Set.of("concurrent.duplicates")));
    cases.add(Arguments.of(Flaw.NO_FINGERPRINT, Set.of("mismatch.body")));
    cases.add(
        Arguments.of(
            Flaw.REPLAYS_DIFFERENT_BYTES,
            // The duplicate told "in progress" retries, as a client does, and gets other bytes.
            Set.of(
                "replay.completed",
                "concurrent.duplicates",
                "inflight.duplicate",
                "lost-answer.retry")));
    cases.add(Arguments.of(Flaw.KEYS_NOT_SCOPED_BY_PRINCIPAL, Set.of("scope.principal")));
    cases.add(Arguments.of(Flaw.KEYS_NOT_SCOPED_RE_RENDERED, Set.of("scope.principal")));
    cases.add(
        Arguments.of(
            Flaw.IN_PROGRESS_NOT_DETECTED,
            Set.of("inflight.duplicate", "inflight.mismatch", "concurrent.duplicates")));
    // The duplicate gives up, answers 500 and frees the key: the client's retry runs it again.
    cases.add(
        Arguments.of(
            Flaw.GIVES_UP_AND_FREES_THE_KEY,
            Set.of("concurrent.duplicates", "inflight.duplicate")));
    cases.add(Arguments.of(Flaw.REFUSALS_RUN_AGAIN, Set.of("errors.replay")));
    return cases;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flaws")
  void eachBrokenServerFailsTheCheckMadeForItsBug(Flaw flaw, Set<String> expected)
      throws Exception {
    Run run = check(flaw);

    assertThat(run.exit()).as("exit status").isEqualTo(1);
    // Exactly the checks made for this bug, and no others, each a breach of the guarantee.
    assertThat(run.failed()).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(run.violated()).isEqualTo(run.failed());
    assertThat(run.stdout()).contains("violates the idempotency guarantee: ");
    assertThat(run.junit()).contains("<failure");
    for (String id : expected) {
      assertThat(run.junit()).contains("name=\"" + id + "\"");
    }
  }

  /**
   * A duplicate that waits for the running request, gives up, answers 500 and deletes the claim:
   * the first request's completion is then stored nowhere. Right after the race there is one
   * effect; the client that got the 500 retries with the same key, as clients do, and that retry
   * runs the operation again. The race checks go on as that client does and count the second
   * effect.
   */
  @Test
  void aDuplicateThatGivesUpAndFreesTheKeyIsFoundByTheClientsRetry() throws Exception {
    Run run = check(Flaw.GIVES_UP_AND_FREES_THE_KEY);

    assertThat(run.detail("inflight.duplicate"))
        .startsWith("second request: 500 ")
        .contains("2 effects for one key: the operation ran again (a duplicate)")
        .contains("the first request was answered 201 ");
    assertThat(run.detail("concurrent.duplicates"))
        .contains("7 × 500 ")
        .contains("2 effects for one key: the operation ran again (a duplicate)");
  }

  /** A decline that is not stored runs again on the retry: two declined records for one key. */
  @Test
  void aRefusalThatRunsAgainIsADuplicateWithItsEffectsCounted() throws Exception {
    Run run = check(Flaw.REFUSALS_RUN_AGAIN);

    assertThat(run.detail("errors.replay"))
        .contains("first 402 {\"errorCode\":\"PAYMENT_DECLINED\"}")
        .contains("1 effect after the first request, 2 after the retry")
        .contains("the refusal ran again instead of being replayed: 2 effects for one key");
  }

  /**
   * The same fault with the timings seen in a real library: a business transaction of 5 s, a
   * duplicate that gives up after 3.1 s. docs/proof.md shows this run.
   */
  @Test
  void aDuplicateThatGivesUpAfterThreeSecondsOfAFiveSecondOperation() throws Exception {
    Run run;
    try (FlawedServer server = new FlawedServer(Flaw.GIVES_UP_AND_FREES_THE_KEY, 5000)) {
      server.giveUpAfter(3100);
      run =
          check(
              server,
              reports,
              "gives-up-at-5s",
              List.of("--only", "concurrent.duplicates,inflight.duplicate,effect.exactly-one"));
    }

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.violated()).containsExactly("concurrent.duplicates", "inflight.duplicate");
    assertThat(run.statuses()).containsEntry("effect.exactly-one", "PASS");
    for (String id : run.violated()) {
      assertThat(run.detail(id))
          .as(id)
          .contains("500 {\"error\":\"timed out waiting for the first request\"}")
          .contains("2 effects for one key: the operation ran again (a duplicate)");
    }
  }
}
