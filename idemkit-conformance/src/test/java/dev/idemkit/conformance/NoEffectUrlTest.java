package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without an {@code --effect-url} nothing counts effects: the run says so on standard error and in
 * its report, naming the checks that are weaker for it, so a green run is not read as proof that
 * each operation ran exactly once.
 */
class NoEffectUrlTest {

  @TempDir Path dir;

  private static Result check(FlawedServer api, Path json, String... more) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                api.itemsArgs(
                    "--only",
                    "key.missing,effect.exactly-one,replay.completed,concurrent.duplicates",
                    "--json",
                    json.toString())));
    args.addAll(List.of(more));
    return UsageTest.run(args.toArray(String[]::new));
  }

  @Test
  void withoutAnEffectUrlTheRunSaysWhatItCannotProve() throws Exception {
    Path json = dir.resolve("report.json");
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      Result r = check(api, json);

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.err())
          .contains(
              "idemkit-conformance: warning: no --effect-url: that each operation ran exactly")
          .contains("effect.exactly-one is skipped")
          // Only the checks that run, and only those that would count effects.
          .contains(
              "key.missing, replay.completed, concurrent.duplicates judge by the answers alone")
          .doesNotContain("lost-answer.retry");
      assertThat(r.out())
          .contains("SKIP  effect.exactly-one")
          .contains("warning: no --effect-url")
          .containsSubsequence("warning: no --effect-url", "1 skipped");
      @SuppressWarnings("unchecked")
      List<String> warnings =
          (List<String>) ((Map<String, Object>) Json.parse(Files.readString(json))).get("warnings");
      assertThat(warnings).singleElement().asString().startsWith("no --effect-url");
    }
  }

  @Test
  void withAnEffectUrlThereIsNoWarning() throws Exception {
    Path json = dir.resolve("counted.json");
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      Result r =
          check(api, json, "--effect-url", "/effects?ref={{unique}}", "--effect-count", "count");

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.err()).doesNotContain("warning");
      assertThat(r.out()).doesNotContain("warning").contains("PASS  effect.exactly-one");
      assertThat((List<?>) ((Map<?, ?>) Json.parse(Files.readString(json))).get("warnings"))
          .isEmpty();
    }
  }
}
