package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.conformance.BrokenServersTest.Run;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.FlawedServer.Semantics;
import dev.idemkit.conformance.Profile.Answer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code stripe} profile and a custom one (a properties file) judge a server by their own
 * rules: a correct server of Stripe's semantics passes {@code stripe} and fails the draft's
 * expectations under {@code ietf}; a custom file's overrides are what the checks then demand.
 */
class ProfilesTest {

  @TempDir Path reports;

  private static RawHttp.Response answer(String head, String body) throws Exception {
    String wire = "HTTP/1.1 " + head + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    return RawHttp.parse(wire.getBytes(StandardCharsets.ISO_8859_1), System.nanoTime());
  }

  @Test
  void anInProgressAnswerIsTheProfilesStatusInTheProfilesForm() throws Exception {
    String problem = "409 Conflict\r\nContent-Type: application/problem+json; charset=utf-8";
    String linked = "409 Conflict\r\nLink: <https://api.test/idem>; rel=\"describedby\"";
    String plain = "409 Conflict\r\nContent-Type: application/json";
    String stripeInUse = "{\"error\":{\"code\":\"idempotency_key_in_use\"}}";

    // The draft only says its answers SHOULD describe the problem: any 409 is in progress.
    assertThat(Profile.IETF.classify(answer(problem, "{}"))).isEqualTo(Answer.IN_PROGRESS);
    assertThat(Profile.IETF.classify(answer(linked, ""))).isEqualTo(Answer.IN_PROGRESS);
    assertThat(Profile.IETF.classify(answer(plain, "{\"error\":\"duplicate\"}")))
        .isEqualTo(Answer.IN_PROGRESS);
    assertThat(Profile.IETF.classify(answer("422 ", "{}"))).isEqualTo(Answer.MISMATCH);
    // A profile that demands the draft's forms: a problem body or a Link, not a 409 in neither.
    Path file = reports.resolve("problem.properties");
    Files.writeString(file, "base=ietf\nin-progress-problem=true\n");
    Profile problems = Profile.custom(file);
    assertThat(problems.classify(answer(problem, "{}"))).isEqualTo(Answer.IN_PROGRESS);
    assertThat(problems.classify(answer(linked, ""))).isEqualTo(Answer.IN_PROGRESS);
    assertThat(problems.classify(answer(plain, "{\"error\":\"duplicate\"}")))
        .isEqualTo(Answer.OTHER);
    // Stripe's 409 is known by its code; its 400 reuse answer by its type.
    assertThat(Profile.STRIPE.classify(answer(plain, stripeInUse))).isEqualTo(Answer.IN_PROGRESS);
    assertThat(Profile.STRIPE.classify(answer(plain, "{\"error\":{\"code\":\"taken\"}}")))
        .isEqualTo(Answer.OTHER);
    assertThat(
            Profile.STRIPE.classify(answer("400 ", "{\"error\":{\"type\":\"idempotency_error\"}}")))
        .isEqualTo(Answer.MISMATCH);
    assertThat(
            Profile.STRIPE.classify(
                answer("400 ", "{\"error\":{\"type\":\"invalid_request_error\"}}")))
        .isEqualTo(Answer.OTHER);
  }

  @Test
  void aServerWithStripesSemanticsPassesTheStripeProfile() throws Exception {
    try (FlawedServer stripe = new FlawedServer(Flaw.NONE, Semantics.STRIPE, 300)) {
      Run run = BrokenServersTest.check(stripe, reports, "stripe", List.of("--profile", "stripe"));

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.failed()).isEmpty();
      Map<String, String> status = run.statuses();
      // The draft's sf-string expectations are not applied to literal keys.
      assertThat(status)
          .containsEntry("key.bad-quoting", "SKIP")
          .containsEntry("key.forms", "SKIP");
      // Keys are optional: a request without one is reported, not judged (it ran: one effect).
      assertThat(status).containsEntry("key.missing", "INFO");
      // Stripe sends no Retry-After with its 409: reported, not required.
      assertThat(status).containsEntry("conflict.retry-after", "INFO");
      // Stripe replays a decline too.
      assertThat(status).containsEntry("errors.replay", "PASS");
      assertThat(run.passed())
          .containsExactlyInAnyOrder(
              "key.form",
              "key.empty",
              "key.too-long",
              "key.control-char",
              "key.non-ascii",
              "key.two-headers",
              "key.max-length",
              "replay.completed",
              "effect.exactly-one",
              "mismatch.body",
              "mismatch.path",
              "concurrent.duplicates",
              "inflight.duplicate",
              "inflight.mismatch",
              "scope.principal",
              "errors.validation-not-stored",
              "errors.replay",
              "lost-answer.retry");
      // Stripe's replay marker is required, and was there; a reused key is Stripe's 400.
      assertThat(run.detail("replay.completed")).endsWith("marked Idempotent-Replayed: true");
      assertThat(run.detail("mismatch.body")).startsWith("400 ").contains("idempotency_error");
      assertThat(run.stdout()).contains("profile stripe");
    }
  }

  @Test
  void theSameServerFailsTheIetfProfileExactlyWhereStripeAndTheDraftDiffer() throws Exception {
    try (FlawedServer stripe = new FlawedServer(Flaw.NONE, Semantics.STRIPE, 300)) {
      Run run = BrokenServersTest.check(stripe, reports, "stripe-as-ietf", List.of());

      assertThat(run.exit()).isEqualTo(1);
      assertThat(run.failed())
          .containsExactlyInAnyOrder(
              // no key: it runs, the draft wants a 400
              "key.missing",
              // "abc (no closing quote) is a fine literal key, a malformed sf-string
              "key.bad-quoting",
              // a 255-character key in quotes is 257 literal characters: too long
              "key.max-length",
              // "k" and k are two keys, so two operations
              "key.forms",
              // 400 for a reused key, the draft's is 422
              "mismatch.body",
              "inflight.mismatch",
              // its 409 for a key in use says nothing of when to retry
              "conflict.retry-after");
      // That 409 is the draft's in-progress status, whatever its body.
      assertThat(run.detail("inflight.duplicate")).contains("409");
      assertThat(run.statuses())
          .containsEntry("concurrent.duplicates", "PASS")
          .containsEntry("inflight.duplicate", "PASS");
    }
  }

  @Test
  void aCustomProfileDemandsWhatItsFileSays() throws Exception {
    Path marked = reports.resolve("marked.properties");
    Files.writeString(
        marked,
        """
        # The draft, plus the replay marker this API promises.
        base=ietf
        name=ietf-marked
        replay-header=Idempotent-Replayed: true
        """);
    try (FlawedServer server = new FlawedServer(Flaw.NONE, 300)) {
      Run run =
          BrokenServersTest.check(
              server, reports, "custom-pass", List.of("--profile", marked.toString()));

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.failed()).isEmpty();
      assertThat(run.passed()).hasSize(22);
      assertThat(run.stdout()).contains("profile ietf-marked");
      assertThat(run.detail("replay.completed")).endsWith("marked Idempotent-Replayed: true");
    }
  }

  @Test
  void aCustomProfileFailsAServerThatDoesNotAnswerAsItsFileSays() throws Exception {
    Path other = reports.resolve("other.properties");
    Files.writeString(
        other,
        """
        base=ietf
        name=acme
        mismatch-status=409
        replay-header=X-Acme-Replay: yes
        """);
    try (FlawedServer server = new FlawedServer(Flaw.NONE, 300)) {
      Run run =
          BrokenServersTest.check(
              server, reports, "custom-fail", List.of("--profile", other.toString()));

      assertThat(run.exit()).isEqualTo(1);
      assertThat(run.failed())
          .containsExactlyInAnyOrder(
              // 422 where the file says 409
              "mismatch.body",
              "inflight.mismatch",
              // replays without X-Acme-Replay: yes
              "replay.completed",
              "errors.replay",
              "lost-answer.retry");
      assertThat(run.detail("mismatch.body")).startsWith("expected 409, got 422");
      assertThat(run.detail("replay.completed")).contains("no replay marker 'X-Acme-Replay: yes'");
    }
  }

  /**
   * An API that answers a reused key with a 409 too: a profile file that says so and names the two
   * answers' codes passes it, and fails a server whose duplicates get a business 409 (neither
   * code), which a status alone would have read as "in progress".
   */
  @Test
  void whenInProgressAndMismatchShareAStatusTheirCodesTellThemApart() throws Exception {
    Path codes = reports.resolve("codes.properties");
    Files.writeString(
        codes,
        """
        base=ietf
        name=conflict-codes
        mismatch-status=409
        in-progress-code=errorCode=IDEMPOTENCY_REQUEST_IN_PROGRESS
        mismatch-code=errorCode=IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST
        """);
    List<String> profile = List.of("--profile", codes.toString());
    try (FlawedServer correct = new FlawedServer(Flaw.NONE, Semantics.CONFLICT_FOR_MISMATCH, 300)) {
      Run run = BrokenServersTest.check(correct, reports, "codes-pass", profile);

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.passed()).hasSize(22);
      assertThat(run.stderr()).doesNotContain("warning");
      assertThat(run.detail("concurrent.duplicates")).contains("7 in progress");
      assertThat(run.detail("inflight.mismatch"))
          .startsWith("second request: 409 ")
          .contains("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    }
    try (FlawedServer broken =
        new FlawedServer(
            Flaw.BUSINESS_CONFLICT_ON_DUPLICATE, Semantics.CONFLICT_FOR_MISMATCH, 300)) {
      Run run = BrokenServersTest.check(broken, reports, "codes-fail", profile);

      assertThat(run.exit()).isEqualTo(1);
      assertThat(run.failed())
          .containsExactlyInAnyOrder(
              "concurrent.duplicates", "inflight.duplicate", "inflight.mismatch");
      assertThat(run.detail("concurrent.duplicates"))
          .contains("REFERENCE_ALREADY_USED")
          .contains("not the conflict-codes profile's in-progress answer (errorCode=REFERENCE");
    }
  }

  /**
   * The same API under a profile that gives 409 to both and no code: the checker cannot tell an
   * in-progress answer from a mismatch, warns at the start, and says "inconclusive" in each race
   * check instead of passing it.
   */
  @Test
  void whenNothingTellsInProgressFromMismatchTheRaceChecksSayInconclusive() throws Exception {
    Path bare = reports.resolve("bare.properties");
    Files.writeString(bare, "base=ietf\nname=conflict-bare\nmismatch-status=409\n");
    try (FlawedServer server = new FlawedServer(Flaw.NONE, Semantics.CONFLICT_FOR_MISMATCH, 300)) {
      Run run =
          BrokenServersTest.check(
              server, reports, "codes-none", List.of("--profile", bare.toString()));

      assertThat(run.failed()).isEmpty();
      assertThat(run.exit()).isZero();
      assertThat(run.stderr())
          .contains(
              "warning: the conflict-bare profile has 409 both for a request in progress and for a"
                  + " key reused with another request");
      for (String id :
          List.of("concurrent.duplicates", "inflight.duplicate", "inflight.mismatch")) {
        assertThat(run.statuses()).containsEntry(id, "SKIP");
        assertThat(run.detail(id))
            .as(id)
            .startsWith("inconclusive: ")
            .contains("no in-progress-code or mismatch-code that tells them apart");
      }
      // After completion a 409 can only be the mismatch.
      assertThat(run.statuses()).containsEntry("mismatch.body", "PASS");
    }
  }

  @Test
  void aProfileFileSetsTheKeyHeaderAndWhetherRefusalsAreReplayed() throws Exception {
    Path file = reports.resolve("settings.properties");
    Files.writeString(file, "base=stripe\nkey-header=X-Idempotency-Key\nrefusals-replayed=false\n");

    Profile profile = Profile.custom(file);

    assertThat(profile.keyHeader()).isEqualTo("X-Idempotency-Key");
    assertThat(profile.refusalsReplayed()).isFalse();
    assertThat(profile.replayHeader())
        .as("the rest from stripe")
        .isEqualTo("Idempotent-Replayed: true");
    assertThat(Profile.IETF.keyHeader()).isEqualTo("Idempotency-Key");
    assertThat(Profile.IETF.refusalsReplayed()).isTrue();
    assertThat(Profile.STRIPE.refusalsReplayed()).isTrue();
    Path bad = reports.resolve("bad.properties");
    Files.writeString(bad, "key-header=X Key\n");
    assertThatThrownBy(() -> Profile.custom(bad))
        .hasMessageContaining("key-header is one header name, such as X-Idempotency-Key");
  }

  /**
   * Where a profile leaves refusals open ({@code refusals-replayed=false}), a decline that runs
   * again is reported, with its effect counts, and fails nothing.
   */
  @Test
  void aProfileThatLeavesRefusalsOpenReportsARefusalRunAgain() throws Exception {
    Path open = reports.resolve("open.properties");
    Files.writeString(open, "base=ietf\nname=ietf-open\nrefusals-replayed=false\n");
    try (FlawedServer server = new FlawedServer(Flaw.REFUSALS_RUN_AGAIN, 300)) {
      Run run =
          BrokenServersTest.check(
              server, reports, "refusals-open", List.of("--profile", open.toString()));

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.statuses()).containsEntry("errors.replay", "INFO");
      assertThat(run.detail("errors.replay"))
          .contains("ran again: the same answer")
          .contains("1 effect after the first request, 2 after the retry");
    }
  }

  /**
   * A server that answers by other conventions than the profile's, with every effect and answer as
   * the guarantee wants them: each failure says it differs from the profile, and {@code --fail-on
   * guarantee} lets the run pass; a server that duplicates still fails it.
   */
  @Test
  void failingOnTheGuaranteeOnlyPassesConventionDifferences() throws Exception {
    Path other = reports.resolve("acme.properties");
    Files.writeString(
        other, "base=ietf\nname=acme\nmismatch-status=409\nreplay-header=X-Acme-Replay: yes\n");
    List<String> args = List.of("--profile", other.toString(), "--fail-on", "guarantee");
    try (FlawedServer server = new FlawedServer(Flaw.NONE, 300)) {
      Run run = BrokenServersTest.check(server, reports, "acme-guarantee", args);

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.failed()).isNotEmpty();
      assertThat(run.violated()).isEmpty();
      assertThat(run.differing()).isEqualTo(run.failed());
      assertThat(run.detail("mismatch.body")).startsWith("expected 409, got 422");
      assertThat(run.stdout())
          .contains("differs from the profile's conventions: expected 409, got 422")
          .contains("5 checks differ from the acme profile's conventions: ")
          .doesNotContain("violate");
      assertThat(run.json()).contains("\"convention\" : 5").contains("\"guarantee\" : 0");
    }
    try (FlawedServer broken = new FlawedServer(Flaw.FIND_THEN_INSERT, 300)) {
      Run run = BrokenServersTest.check(broken, reports, "find-then-insert-guarantee", args);

      assertThat(run.exit()).isEqualTo(1);
      assertThat(run.violated()).containsExactly("concurrent.duplicates");
      assertThat(run.stdout())
          .contains("1 check violates the idempotency guarantee: concurrent.duplicates");
    }
  }
}
