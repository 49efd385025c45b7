package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.BrokenServersTest.Run;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.FlawedServer.Semantics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
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

  @Test
  void aServerWithStripesSemanticsPassesTheStripeProfile() throws Exception {
    try (FlawedServer stripe = new FlawedServer(Flaw.NONE, Semantics.STRIPE, 300)) {
      Run run = BrokenServersTest.check(stripe, reports, "stripe", List.of("--profile", "stripe"));

      assertThat(run.exit()).as(run.stdout()).isZero();
      assertThat(run.failed()).isEmpty();
      Map<String, String> status = statusById(run);
      // The draft's sf-string expectations are not applied to literal keys.
      assertThat(status)
          .containsEntry("key.bad-quoting", "SKIP")
          .containsEntry("key.forms", "SKIP");
      // Keys are optional: a request without one is reported, not judged (it ran: one effect).
      assertThat(status).containsEntry("key.missing", "INFO");
      // Stripe sends no Retry-After with its 409: reported, not required.
      assertThat(status).containsEntry("conflict.retry-after", "INFO");
      assertThat(status).containsEntry("errors.replay", "INFO");
      assertThat(run.passed())
          .containsExactlyInAnyOrder(
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
              "lost-answer.retry");
      // Stripe's replay marker is required, and was there; a reused key is Stripe's 400.
      assertThat(detail(run, "replay.completed")).endsWith("marked Idempotent-Replayed: true");
      assertThat(detail(run, "mismatch.body")).startsWith("400 ").contains("idempotency_error");
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
              // no Retry-After on the 409
              "conflict.retry-after");
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
      assertThat(run.passed()).hasSize(20);
      assertThat(run.stdout()).contains("profile ietf-marked");
      assertThat(detail(run, "replay.completed")).endsWith("marked Idempotent-Replayed: true");
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
              "lost-answer.retry");
      assertThat(detail(run, "mismatch.body")).startsWith("expected 409, got 422");
      assertThat(detail(run, "replay.completed")).contains("no replay marker 'X-Acme-Replay: yes'");
    }
  }

  private static Map<String, String> statusById(Run run) {
    Map<String, String> statuses = new LinkedHashMap<>();
    for (Map<String, Object> check : checks(run)) {
      statuses.put((String) check.get("id"), (String) check.get("status"));
    }
    return statuses;
  }

  private static String detail(Run run, String id) {
    for (Map<String, Object> check : checks(run)) {
      if (id.equals(check.get("id"))) {
        return (String) check.get("detail");
      }
    }
    throw new AssertionError("no check " + id + " in the report");
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> checks(Run run) {
    return (List<Map<String, Object>>) ((Map<String, Object>) Json.parse(run.json())).get("checks");
  }
}
