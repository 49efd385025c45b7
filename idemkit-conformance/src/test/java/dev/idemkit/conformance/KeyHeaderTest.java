package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.BrokenServersTest.Run;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An API that takes its key in {@code X-Idempotency-Key}: a profile file's {@code key-header} names
 * it, and every check then sends its keys there (the two-header check two of them); without it, the
 * first request is refused and the run stops, saying where the key may belong.
 */
class KeyHeaderTest {

  private static final String HEADER = "X-Idempotency-Key";

  @TempDir Path reports;

  private List<String> profile() throws Exception {
    Path file = reports.resolve("x-key.properties");
    Files.writeString(file, "base=ietf\nname=ietf-x-key\nkey-header=" + HEADER + "\n");
    return List.of("--profile", file.toString());
  }

  /** The checker, with the profile that names the header, against a server that reads it. */
  private Run check(Flaw flaw) throws Exception {
    try (FlawedServer api = new FlawedServer(flaw, 300)) {
      api.readKeyFrom(HEADER);
      return BrokenServersTest.check(api, reports, "x-key-" + flaw, profile());
    }
  }

  @Test
  void aProfileWithTheApisKeyHeaderChecksItFully() throws Exception {
    Run run = check(Flaw.NONE);

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isZero();
    assertThat(run.passed()).hasSize(22);
    assertThat(run.stdout()).contains("Two X-Idempotency-Key headers are ambiguous");
    assertThat(run.detail("key.empty")).startsWith("sent X-Idempotency-Key: : 400 ");
  }

  @Test
  void aBugBehindThatHeaderIsFoundByItsCheck() throws Exception {
    Run run = check(Flaw.NO_FINGERPRINT);

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.failed()).containsExactly("mismatch.body");
    assertThat(run.violated()).containsExactly("mismatch.body");
    assertThat(run.detail("mismatch.body"))
        .contains("a different request was silently answered with the first one's answer")
        .contains("the first request was answered 201 ");
  }

  @Test
  void withoutItTheRunStopsAndNamesTheSetting() throws Exception {
    Result r;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      api.readKeyFrom(HEADER);
      r = UsageTest.run(api.itemsArgs());
    }

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("answered 400 {\"errorCode\":\"IDEMPOTENCY_KEY_MISSING\"}")
        .contains("takes its key in Idempotency-Key (a profile file's key-header names another")
        .contains("no check ran");
  }
}
