package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.BrokenServersTest.Run;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.FlawedServer.Semantics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An API that takes only one spelling of a key, bare ({@code abc-123}) or sf-string ({@code
 * "abc-123"}), while the profile sends the other: one finding, {@code key.form}, and the other
 * checks judge the rest with the form the API takes, instead of a run stopped on the first request
 * or a wall of failures that each blame something else.
 */
class KeyFormTest {

  @TempDir Path reports;

  @Test
  void anApiThatRefusesTheDraftsQuotedKeyIsOneFinding() throws Exception {
    Run run;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, Semantics.BARE_KEYS_ONLY, 300)) {
      run = BrokenServersTest.check(api, reports, "bare-only", List.of("--profile", "ietf"));
    }

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isEqualTo(1);
    assertThat(run.failed()).containsExactly("key.form");
    assertThat(run.detail("key.form"))
        .contains("the API refuses the key in the ietf profile's form (an sf-string, \"")
        .contains("400 {\"errorCode\":\"IDEMPOTENCY_KEY_INVALID\"}")
        .contains("it accepts a key sent bare")
        .contains("the other checks send the form the API takes");
    assertThat(run.statuses()).containsEntry("key.forms", "SKIP");
    assertThat(run.passed()).hasSize(20);
    assertThat(run.stderr()).contains("idemkit-conformance: key.form: the API refuses the key");
  }

  @Test
  void anApiThatRefusesABareKeyFailsABareKeyProfileOnce() throws Exception {
    Path bare = reports.resolve("bare.properties");
    Files.writeString(bare, "base=ietf\nname=ietf-bare\nkey-form=bare\n");
    Run run;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, Semantics.SF_STRING_KEYS_ONLY, 300)) {
      run = BrokenServersTest.check(api, reports, "sf-only", List.of("--profile", bare.toString()));
    }

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isEqualTo(1);
    assertThat(run.failed()).containsExactly("key.form");
    assertThat(run.detail("key.form"))
        .contains("the API refuses the key in the ietf-bare profile's form (bare, ")
        .contains("it accepts a key sent as an sf-string");
  }

  @Test
  void anApiThatTakesTheProfilesFormPassesIt() throws Exception {
    Run run;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, Semantics.SF_STRING_KEYS_ONLY, 300)) {
      run = BrokenServersTest.check(api, reports, "sf-string", List.of("--profile", "ietf"));
    }

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isZero();
    assertThat(run.statuses()).containsEntry("key.form", "PASS").containsEntry("key.forms", "PASS");
  }

  /**
   * With {@code --only} leaving {@code key.form} out, the finding is no verdict, but the checks
   * that run send the form the API takes, not the profile's: the report says so as a warning.
   */
  @Test
  void aKeyFormFindingOutsideOnlyIsAWarningInTheReports() throws Exception {
    Run run;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, Semantics.BARE_KEYS_ONLY, 20)) {
      run =
          BrokenServersTest.check(
              api,
              reports,
              "bare-only-selected",
              List.of("--profile", "ietf", "--only", "key.missing,replay.completed"));
    }

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isZero();
    assertThat(run.statuses()).containsOnlyKeys("key.missing", "replay.completed");
    String warning =
        "key.form (not selected by --only, so no verdict): the API refuses the key in the ietf"
            + " profile's form (an sf-string, \"";
    @SuppressWarnings("unchecked")
    List<String> warnings =
        (List<String>) ((Map<String, Object>) Json.parse(run.json())).get("warnings");
    assertThat(warnings).singleElement().asString().startsWith(warning).contains("accepts a key");
    assertThat(run.stdout()).contains("warning: " + warning);
    assertThat(run.stderr()).contains("idemkit-conformance: warning: " + warning);
    Path junit = reports.resolve("bare-only-selected.xml");
    assertThat(JunitReportTest.warningProperties(JunitReportTest.suite(junit)))
        .singleElement()
        .asString()
        .startsWith(warning);
  }
}
