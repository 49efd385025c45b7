package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.io.IOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Before any check, one ordinary request (a fresh key, the body, the credentials) must succeed: a
 * wrong path, method or credential is a configuration error that says which option to look at (exit
 * status 2), not twenty failures that each show the same 404 or 401.
 */
class FirstRequestTest {

  private FlawedServer api;

  @BeforeEach
  void start() throws IOException {
    api = new FlawedServer(Flaw.NONE, 20);
  }

  @AfterEach
  void stop() {
    api.close();
  }

  private Result check(String path, String... auth) {
    return UsageTest.run(
        "--base-url",
        api.baseUrl(),
        "--path",
        path,
        "--body",
        "{\"ref\":\"{{unique}}\",\"amount\":\"10.00\"}",
        auth.length == 0 ? "--header" : "--auth",
        auth.length == 0 ? "X-Trace: 1" : auth[0]);
  }

  @Test
  void aWrongPathStopsTheRunBeforeAnyCheckNamingThePathOptions() {
    Result r = check("/itemz", "Bearer tenant-a");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("the first request to POST /itemz with a fresh key answered 404")
        .contains("check --base-url, --path and --method")
        .contains("no check ran (exit status 2)");
    assertThat(r.out()).doesNotContain("FAIL").doesNotContain("key.missing");
  }

  @Test
  void refusedCredentialsStopTheRunNamingAuth() {
    Result r = check("/items");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("answered 401")
        .contains("check --auth (and --header)")
        .contains("no check ran");
    assertThat(r.out()).doesNotContain("FAIL");
    assertThat(api.posts()).as("only the first request was sent").isEqualTo(1);
  }

  @Test
  void aRequestTheApiAcceptsLetsTheChecksRun() {
    Result r = UsageTest.run(api.itemsArgs("--only", "replay.completed"));

    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("PASS  replay.completed");
  }

  @Test
  void concurrencyHasAnUpperBound() {
    Result r = UsageTest.run(UsageTest.withRequired("--concurrency", "100000"));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--concurrency must be between 2 and 256");
  }
}
