package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Request;
import dev.idemkit.conformance.RawHttp.Response;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A completed request retried: the same answer, one effect, also when the first answer was lost in
 * transit.
 */
final class ReplayChecks extends CheckGroup {

  ReplayChecks(Endpoint api) {
    super(api);
  }

  /** The retries of a completed request. */
  @Override
  List<Check> checks() {
    return List.of(
        new Check(
            "replay.completed",
            "A retry of a completed request gets the first answer: status, body bytes, Location.",
            this::replay),
        new Check(
            "effect.exactly-one",
            "A request and its retries have exactly one effect (counted via the effect URL).",
            this::exactlyOne));
  }

  /** The retry of a request whose answer was lost: the run's last check, through a proxy. */
  Check lostAnswerCheck() {
    return new Check(
        "lost-answer.retry",
        "After the answer was lost in transit (server committed), the retry gets it; one effect.",
        this::lostAnswer);
  }

  private Verdict replay() throws Exception {
    String u = api.unique();
    Request request = api.request(u, api.freshKey());
    Response first = api.settle(request);
    if (!first.success()) {
      return Verdict.differs("the first request failed: " + first.summary());
    }
    Findings findings = new Findings().first(first);
    for (int i = 1; i <= 2; i++) {
      Answers.sameAnswer("retry " + i, first, api.settle(request), profile, findings);
    }
    Answers.markerProblem(first, false, profile).ifPresent(findings::differs);
    findings.effect(api.duplicateNote(u));
    return findings.verdict(
        "",
        first.status()
            + ", "
            + Answers.count(first.body().length, "body byte")
            + first.header("Location").map(l -> ", Location " + l).orElse("")
            + " replayed twice"
            + Answers.replayMarkerNote(profile));
  }

  private Verdict exactlyOne() throws Exception {
    if (api.o.effectUrl() == null) {
      return Verdict.skip("no --effect-url to count effects with");
    }
    String u = api.unique();
    Request request = api.request(u, api.freshKey());
    Response first = null;
    for (int i = 0; i < 3; i++) {
      Response r = api.settle(request);
      if (!r.success()) {
        return Verdict.differs("attempt " + (i + 1) + " failed: " + r.summary());
      }
      first = first == null ? r : first;
    }
    long n = api.effects(u);
    return n == 1
        ? Verdict.pass("3 attempts, 1 effect")
        : Verdict.violation(
            "3 attempts with one key, "
                + Answers.count(n, "effect")
                + "; the first request was answered "
                + first.summary());
  }

  private Verdict lostAnswer() throws Exception {
    String u = api.unique();
    Request request = api.request(u, api.freshKey());
    Response lost;
    try (LossyProxy proxy = new LossyProxy(api.o.baseUrl(), api.o.timeout())) {
      // Sent to the proxy, but for the server: its Host, so a server that routes by host name
      // (virtual hosts behind one address) gets it where the checker's other requests go.
      List<Map.Entry<String, String>> headers = new ArrayList<>();
      headers.add(Map.entry("Host", RawHttp.host(request.uri())));
      headers.addAll(request.headers());
      Request viaProxy =
          new Request(
              request.method(),
              proxy.uri().resolve(request.uri().getRawPath() + query(request)),
              headers,
              request.body());
      try {
        Response reached = api.send(viaProxy);
        return Verdict.differs("the proxy failed to lose the answer: " + reached.summary());
      } catch (IOException expected) {
        // The answer was lost, as intended.
      }
      lost = proxy.swallowedAnswer();
    }
    if (!lost.success()) {
      return Verdict.differs(
          "the first request (answer lost) failed at the server: " + lost.summary());
    }
    Response retry = api.settle(request);
    Findings findings = new Findings().first(lost);
    Answers.sameAnswer("the retry", lost, retry, profile, findings);
    findings.effect(api.duplicateNote(u));
    return findings.verdict(
        "",
        "lost " + lost.status() + ", the retry got the same " + retry.status() + api.countedNote());
  }

  private static String query(Request request) {
    return request.uri().getRawQuery() == null ? "" : "?" + request.uri().getRawQuery();
  }
}
