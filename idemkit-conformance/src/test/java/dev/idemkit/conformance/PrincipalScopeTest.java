package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code scope.principal} judges by the resource and, with an effect URL, by the effect, not by the
 * bytes: an API whose keys are global and that renders the stored resource anew for whoever replays
 * the key (its own {@code viewer}, no replay marker) leaks another principal's operation although
 * no byte-identical answer is sent.
 */
class PrincipalScopeTest {

  private static Result check(FlawedServer api, String... more) {
    // No --mismatch-body: the leak must be seen in the replay itself.
    List<String> args =
        new ArrayList<>(
            List.of(api.itemsArgs("--auth2", "Bearer tenant-b", "--only", "scope.principal")));
    args.addAll(List.of(more));
    return UsageTest.run(args.toArray(String[]::new));
  }

  @Test
  void aReRenderedReplayOfAnotherPrincipalsResourceIsALeak() throws Exception {
    try (FlawedServer api = new FlawedServer(Flaw.KEYS_NOT_SCOPED_RE_RENDERED, 20)) {
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .contains("FAIL  scope.principal")
          .contains(
              "same key and body: the second principal got the first principal's resource,"
                  + " re-rendered (the same Location /items/it_")
          .contains("\"viewer\":\"Bearer tenant-b\"");
    }
  }

  @Test
  void anIdentifierIsEnoughWithoutALocation() throws Exception {
    // The same leak, judged on the body alone: the Location is not what gives it away.
    try (FlawedServer api = new FlawedServer(Flaw.KEYS_NOT_SCOPED_RE_RENDERED, 20)) {
      api.omitLocation();
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .contains("FAIL  scope.principal")
          .contains("first principal's resource, re-rendered (the same id it_");
    }
  }

  @Test
  void withNeitherLocationNorIdentifierTheEffectCountTells() throws Exception {
    // The answer names nothing the server made: only counting what the second principal's
    // request created, as that principal sees it, shows that it created nothing.
    try (FlawedServer api = new FlawedServer(Flaw.KEYS_NOT_SCOPED_RE_RENDERED, 20)) {
      api.omitIdentifiers();
      Result r = check(api, "--effect-url", "/effects?ref={{unique}}", "--effect-count", "count");

      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .contains("FAIL  scope.principal")
          .contains(
              "the second principal's request created nothing (--effect-url, asked with --auth2,"
                  + " counts 1 before and after it)");
    }
  }

  @Test
  void eachPrincipalsOwnOperationPasses() throws Exception {
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.out()).contains("PASS  scope.principal");
    }
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      api.omitIdentifiers();
      Result r = check(api, "--effect-url", "/effects?ref={{unique}}", "--effect-count", "count");

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.out()).contains("PASS  scope.principal");
    }
  }
}
