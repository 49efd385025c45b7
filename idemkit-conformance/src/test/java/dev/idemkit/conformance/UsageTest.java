package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line refuses what it cannot check before sending anything (exit status 2, one line
 * saying why, then the usage), so that a typo in a CI job never turns into a green run of nothing
 * or into failures blamed on the server.
 */
class UsageTest {

  @TempDir Path dir;

  record Result(int exit, String out, String err) {}

  static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        ConformanceMain.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static String[] withRequired(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--base-url",
                "http://127.0.0.1:9",
                "--path",
                "/x",
                "--body",
                "{\"a\":\"{{unique}}\"}"));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  @Test
  void helpIsTheUsageOnStandardOutputAndSucceeds() {
    for (String flag : new String[] {"--help", "-h"}) {
      Result r = run(flag);
      assertThat(r.exit()).isZero();
      assertThat(r.out()).startsWith("Usage: java -jar idemkit-conformance.jar").contains("--only");
      assertThat(r.out())
          .contains("--fail-on KIND")
          .contains("key-header")
          .contains("refusals-replayed");
      assertThat(r.err()).isEmpty();
    }
  }

  @Test
  void failOnIsAnyOrGuarantee() {
    Result r = run(withRequired("--fail-on", "convention"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--fail-on is any or guarantee, not 'convention'");
  }

  @Test
  void anUnknownCheckIdIsAUsageErrorNotAnEmptyGreenRun() {
    Result r = run(withRequired("--only", "key.mising,replay.completed"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--only names no check [key.mising]").contains("key.missing");
    assertThat(r.out()).doesNotContain("passed");
    assertThat(Checker.IDS).contains("key.missing", "replay.completed", "lost-answer.retry");
    // Spaces after the commas are not part of an id.
    assertThat(run(withRequired("--only", "key.missing, replay.completed")).err())
        .doesNotContain("names no check")
        .contains("cannot connect to --base-url http://127.0.0.1:9");
  }

  @Test
  void aProfileFileWithAnUnknownSettingOrBaseIsRefused() throws Exception {
    Path typo =
        Files.writeString(dir.resolve("typo.properties"), "base=ietf\nmismatch_status=409\n");
    Path base = Files.writeString(dir.resolve("base.properties"), "base=ietff\n");
    Path bool = Files.writeString(dir.resolve("bool.properties"), "require-key=yes\n");

    assertThat(run(withRequired("--profile", typo.toString())))
        .satisfies(r -> assertThat(r.exit()).isEqualTo(2))
        .satisfies(r -> assertThat(r.err()).contains("unknown setting 'mismatch_status'"));
    assertThat(run(withRequired("--profile", base.toString())).err())
        .contains("base is ietf or stripe, not 'ietff'");
    assertThat(run(withRequired("--profile", bool.toString())).err())
        .contains("require-key is true or false, not 'yes'");
    assertThat(run(withRequired("--profile", "IETF")).err())
        .contains("--profile is ietf, stripe, or a properties file; no file IETF");
  }

  @Test
  void aBaseUrlTheCheckerCannotSpeakToIsRefusedUpFront() {
    for (String url : new String[] {"localhost:8080", "https://localhost:8443", "http://"}) {
      Result r = run("--base-url", url, "--path", "/x", "--body", "{}");
      assertThat(r.exit()).as(url).isEqualTo(2);
      assertThat(r.err()).as(url).contains("--base-url must be an http:// URL");
    }
  }

  @Test
  void pathsAndTheEffectUrlAreCheckedBeforeAnythingIsSent() {
    assertThat(run("--base-url", "http://127.0.0.1:9", "--path", "v1/x", "--body", "{}").err())
        .contains("--path is a path under --base-url starting with /, e.g. /v1/payments, not v1/x");
    assertThat(run(withRequired("--other-path", "v1/orders")).err())
        .contains("--other-path is a path under --base-url starting with /");
    assertThat(run(withRequired("--effect-url", "/v1/payments?ref=fixed")).err())
        .contains("--effect-url must contain {{unique}}");
    assertThat(run(withRequired("--effect-url", "https://h/x?r={{unique}}")).err())
        .contains("--effect-url is a path under --base-url (starting with /) or an http:// URL")
        .contains("(https is not supported)");
    for (String[] args :
        List.of(
            withRequired("--other-path", "v1/orders"),
            withRequired("--effect-url", "/v1/payments?ref=fixed"),
            withRequired("--timeout-s", "0"))) {
      assertThat(run(args).exit()).isEqualTo(2);
    }
    assertThat(run(withRequired("--timeout-s", "0")).err())
        .contains("--timeout-s must be at least 1");
  }

  @Test
  void anUnknownOptionIsNamedAsOneWhereverItStands() {
    Result last = run(withRequired("--bogus"));
    Result joined = run(withRequired("--json=report.json"));

    assertThat(last.exit()).isEqualTo(2);
    assertThat(last.err()).contains("unknown option --bogus").doesNotContain("needs a value");
    assertThat(joined.exit()).isEqualTo(2);
    assertThat(joined.err())
        .contains(
            "unknown option --json=report.json; give the value as the next argument: --json"
                + " VALUE");
    assertThat(run(withRequired("--json")).err()).contains("--json needs a value");
  }

  @Test
  void aProfileCodeIsPathEqualsValue() throws Exception {
    Path bad = Files.writeString(dir.resolve("code.properties"), "in-progress-code=errorCode\n");

    Result r = run(withRequired("--profile", bad.toString()));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("in-progress-code is PATH=VALUE").contains("not 'errorCode'");
  }

  @Test
  void aBadNumberNamesItsOption() {
    Result r = run(withRequired("--concurrency", "abc"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--concurrency takes a whole number, not 'abc'");
  }

  @Test
  void aShortenedTextNeverEndsInHalfACharacter() {
    String text = "x" + "\uD83D\uDE00".repeat(100);

    String cut = Answers.prefix(text, 120);

    assertThat(cut).hasSizeLessThanOrEqualTo(120);
    assertThat(Character.isHighSurrogate(cut.charAt(cut.length() - 1))).isFalse();
    assertThat(StandardCharsets.UTF_8.newEncoder().canEncode(cut)).isTrue();
    assertThat(Answers.prefix("short", 120)).isEqualTo("short");
  }

  /**
   * A base or effect URL that is no URL, or whose port no socket can reach, is a usage error naming
   * the option; it was a stack trace and exit status 1 (read as a failed check) or a bare parse
   * error.
   */
  @Test
  void aUrlThatCannotBeAskedIsAUsageErrorNamingTheOption() {
    Result port = run("--base-url", "http://127.0.0.1:99999", "--path", "/x", "--body", "{}");
    assertThat(port.exit()).isEqualTo(2);
    assertThat(port.err())
        .contains("idemkit-conformance: --base-url has port 99999, which no server listens on")
        .doesNotContain("Exception");

    Result syntax = run("--base-url", "http://not a host", "--path", "/x", "--body", "{}");
    assertThat(syntax.exit()).isEqualTo(2);
    assertThat(syntax.err()).contains("idemkit-conformance: --base-url is not a URL: ");

    for (String effect :
        new String[] {"http://127.0.0.1:70000/e?r={{unique}}", "http://bad host/e?r={{unique}}"}) {
      Result r = run(withRequired("--effect-url", effect));
      assertThat(r.exit()).as(effect).isEqualTo(2);
      assertThat(r.err()).as(effect).contains("idemkit-conformance: --effect-url ");
      assertThat(r.err()).as(effect).doesNotContain("Exception").doesNotContain("cannot connect");
    }
  }

  /** A timeout past an int of milliseconds overflowed into a stack trace and exit status 1. */
  @Test
  void aTimeoutLongerThanAnHourIsAUsageError() {
    Result r = run(withRequired("--timeout-s", "3000000"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("idemkit-conformance: --timeout-s must be at most 3600 (an hour), not 3000000")
        .doesNotContain("Exception");
  }

  /** A delay of hours before the in-flight checks' second request hung the run silently. */
  @Test
  void anInflightDelayAsLongAsTheTimeoutIsAUsageError() {
    Result r = run(withRequired("--inflight-delay-ms", "30000"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains(
            "idemkit-conformance: --inflight-delay-ms must be shorter than --timeout-s (30000 ms)")
        .contains("not 30000")
        .doesNotContain("Exception");
    assertThat(run(withRequired("--inflight-delay-ms", "9999999999999", "--timeout-s", "5")).err())
        .contains("--inflight-delay-ms must be shorter than --timeout-s (5000 ms)");
  }

  /** A concurrency past an int wrapped around: 4294967298 ran as 2. */
  @Test
  void aConcurrencyPastAnIntIsOutOfRange() {
    Result r = run(withRequired("--concurrency", "4294967298"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--concurrency must be between 2 and 256");
  }

  /**
   * A method that is no HTTP token broke the request line: the API's 400 was then blamed on the
   * body ("check --body, --content-type and --header").
   */
  @Test
  void aMethodThatIsNoHttpTokenIsAUsageError() {
    for (String method : new String[] {"GET POST", "", "PO\"ST"}) {
      Result r = run(withRequired("--method", method));
      assertThat(r.exit()).as(method).isEqualTo(2);
      assertThat(r.err())
          .as(method)
          .contains("--method is one HTTP method, such as POST or PUT, not '" + method + "'")
          .doesNotContain("cannot connect");
    }
  }

  /**
   * A report path that is a directory was found only when the report was written, after every check
   * had run: the run's time lost, exit status 2. It is refused before anything is sent.
   */
  @Test
  void aReportPathThatIsADirectoryIsAUsageError() {
    for (String flag : new String[] {"--json", "--junit"}) {
      Result r = run(withRequired(flag, dir.toString()));
      assertThat(r.exit()).as(flag).isEqualTo(2);
      assertThat(r.err())
          .as(flag)
          .contains("idemkit-conformance: " + flag + " names a directory, " + dir)
          .doesNotContain("cannot connect");
    }
  }
}
