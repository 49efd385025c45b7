package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The effect URL is the user's own oracle, not the endpoint under test: when it cannot count, the
 * checker says so as a configuration error (exit status 2, the option and what it answered), before
 * any request reaches the endpoint, and never as a check's failure.
 */
class EffectUrlTest {

  @TempDir Path reports;

  private FlawedServer api;
  private HttpServer oracle;
  private final AtomicInteger flakyCalls = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    api = new FlawedServer(Flaw.NONE, 50);
    oracle = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    serve("/missing", 404, "application/json", "{\"error\":\"not found\"}");
    serve("/text", 200, "text/plain", "no payments");
    serve("/object", 200, "application/json", "{\"data\":[]}");
    serve("/everything", 200, "application/json", "{\"count\":3}");
    // Counts at first, then breaks: the oracle failing in the middle of a run.
    oracle.createContext(
        "/flaky",
        ex -> {
          boolean first = flakyCalls.getAndIncrement() == 0;
          byte[] body =
              (first ? "{\"count\":0}" : "{\"error\":\"database down\"}")
                  .getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().add("Content-Type", "application/json");
          ex.sendResponseHeaders(first ? 200 : 500, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    oracle.start();
  }

  @AfterEach
  void stop() {
    oracle.stop(0);
    api.close();
  }

  private void serve(String path, int status, String type, String body) {
    oracle.createContext(
        path,
        ex -> {
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().add("Content-Type", type);
          ex.sendResponseHeaders(status, bytes.length);
          ex.getResponseBody().write(bytes);
          ex.close();
        });
  }

  private String oracleUrl(String path) {
    return "http://127.0.0.1:" + oracle.getAddress().getPort() + path + "?ref={{unique}}";
  }

  private Result check(String baseUrl, String effectUrl, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--base-url",
                baseUrl,
                "--path",
                "/items",
                "--body",
                "{\"ref\":\"{{unique}}\",\"amount\":\"10.00\"}",
                "--auth",
                "Bearer tenant-a",
                "--effect-url",
                effectUrl,
                "--json",
                reports.resolve("report.json").toString()));
    args.addAll(List.of(more));
    return UsageTest.run(args.toArray(String[]::new));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "/missing    | ''           | answered 404 {\"error\":\"not found\"}; it must answer 2xx",
        "/text       | ''           | answered 200 no payments, which is not JSON",
        "/object     | ''           | it is not a count (an array or a number); say where its count is"
            + " with --effect-count",
        "/object     | total        | answered 200 {\"data\":[]}: no 'total' in it (--effect-count"
            + " total)",
        "/everything | count        | counts 3 for a {{unique}} no request has used yet",
      })
  void anEffectUrlThatDoesNotCountIsAConfigurationErrorBeforeAnyRequest(
      String path, String effectCount, String expected) {
    Result r =
        check(
            api.baseUrl(),
            oracleUrl(path),
            "--effect-count",
            effectCount,
            "--only",
            "key.missing,replay.completed");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("idemkit-conformance: --effect-url " + oracleUrl(path).replace("{{unique}}", ""))
        .contains(expected)
        .contains("no check ran (exit status 2)");
    assertThat(r.out()).doesNotContain("FAIL").doesNotContain("PASS");
    // Nothing reached the endpoint under test, with a key or without.
    assertThat(api.posts()).isZero();
    assertThat(reports.resolve("report.json")).doesNotExist();
  }

  @Test
  void anEffectUrlThatDropsTheConnectionIsNamedWithWhatHappened() throws Exception {
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

      Result r = check(api.baseUrl(), effectUrl);

      assertThat(r.exit()).isEqualTo(2);
      assertThat(r.err())
          .contains("--effect-url http://127.0.0.1:" + silent.getLocalPort() + "/effects?ref=")
          .contains("gave no answer: the connection closed without an answer");
      assertThat(r.out()).doesNotContain("FAIL");
      assertThat(api.posts()).isZero();
    }
  }

  @Test
  void anEffectUrlThatStopsCountingMidRunStopsTheRunWithoutBlamingTheEndpoint() {
    Result r =
        check(
            api.baseUrl(),
            oracleUrl("/flaky"),
            "--effect-count",
            "count",
            "--only",
            "key.missing,replay.completed");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("the run stopped at key.missing: --effect-url ")
        .contains("answered 500 {\"error\":\"database down\"}")
        .contains("no report was written");
    assertThat(r.out()).doesNotContain("FAIL").doesNotContain("replay.completed");
    assertThat(reports.resolve("report.json")).doesNotExist();
  }

  @Test
  void anApiThatTakesNoConnectionIsAConfigurationErrorNotTwentyFailures() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }

    Result r = check("http://127.0.0.1:" + closedPort, "/effects?ref={{unique}}");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("cannot connect to --base-url http://127.0.0.1:" + closedPort)
        .contains("no check ran");
    assertThat(r.out()).doesNotContain("FAIL");
  }

  @Test
  void aWorkingEffectUrlIsProbedOnceAndTheChecksRun() {
    Result r =
        check(
            api.baseUrl(),
            "/effects?ref={{unique}}",
            "--effect-count",
            "count",
            "--only",
            "effect.exactly-one");

    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("PASS  effect.exactly-one").contains("3 attempts, 1 effect");
  }
}
