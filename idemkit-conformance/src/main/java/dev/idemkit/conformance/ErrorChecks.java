package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Request;
import dev.idemkit.conformance.RawHttp.Response;
import java.util.List;
import java.util.Map;

/**
 * Requests that end in an error answer: a refusal of the operation itself (a decline), which the
 * profile may require to be replayed, and a request refused by validation, which stores nothing.
 */
final class ErrorChecks extends CheckGroup {

  ErrorChecks(Endpoint api) {
    super(api);
  }

  @Override
  List<Check> checks() {
    return List.of(
        new Check(
            "errors.replay",
            profile.refusalsReplayed()
                ? "An error answer (a refusal such as a decline) is stored and replayed, never run"
                    + " again."
                : "Reported: whether an error answer is stored and replayed, or the request runs"
                    + " again.",
            this::errorReplay),
        new Check(
            "errors.validation-not-stored",
            "A request refused by validation stores nothing: fixed, the same key runs as new.",
            this::validationNotStored));
  }

  /**
   * A refusal retried with its key. Where the profile says refusals are replayed, one that runs
   * again fails, and the effect URL (which counts what the refused request created, such as a
   * declined payment) tells whether it left a second record: two refused records for one key are a
   * duplicate.
   */
  private Verdict errorReplay() throws Exception {
    Options o = api.o;
    if (o.errorBody() == null && o.errorHeaders().isEmpty()) {
      return Verdict.skip("no --error-body or --error-header");
    }
    String u = api.unique();
    String body = o.errorBody() == null ? o.body() : o.errorBody();
    List<Map.Entry<String, String>> key = api.freshKey();
    Request request = api.request(u, key, o.auth(), body, o.path(), o.errorHeaders());
    // Sent as they are, not settled: the error answer is what this check is about.
    Response first = api.send(request);
    if (first.success()) {
      return Verdict.info("the error request succeeded: " + first.summary());
    }
    long before = o.effectUrl() == null ? -1 : api.effects(u);
    Response again = api.send(request);
    long after = o.effectUrl() == null ? -1 : api.effects(u);
    // The same answer is no replay if the refusal left a second record behind.
    boolean ranAgain = after > before;
    boolean replayed = Answers.same(first, again) && !ranAgain;
    String counted =
        before < 0
            ? ""
            : ranAgain
                ? "; "
                    + Answers.count(before, "effect")
                    + " after the first request, "
                    + after
                    + " after the retry"
                : "; " + Answers.count(after, "effect") + " before and after the retry";
    String seen =
        "first "
            + first.summary()
            + "; the retry "
            + (replayed
                ? "got it replayed" + (Answers.isReplayMarked(again, profile) ? " (marked)" : "")
                : "ran again: "
                    + (Answers.same(first, again) ? "the same answer" : again.summary()))
            + counted;
    if (!profile.refusalsReplayed()) {
      return Verdict.info(seen);
    }
    Findings findings = new Findings().first(first);
    if (ranAgain) {
      findings.violation(
          "the refusal ran again instead of being replayed: "
              + Answers.count(after, "effect")
              + " for one key (a duplicate)");
    } else if (!replayed) {
      findings.violation(
          "the refusal was not replayed ("
              + profile.name()
              + ": refusals-replayed=true): "
              + Answers.difference(first, again));
    } else {
      Answers.markerProblem(again, true, profile).ifPresent(findings::differs);
    }
    return findings.verdict(seen, seen);
  }

  private Verdict validationNotStored() throws Exception {
    Options o = api.o;
    if (o.invalidBody() == null) {
      return Verdict.skip("no --invalid-body");
    }
    String u = api.unique();
    List<Map.Entry<String, String>> key = api.freshKey();
    Response bad = api.send(api.request(u, key, o.auth(), o.invalidBody(), o.path(), List.of()));
    if (bad.success()) {
      return Verdict.skip("the invalid body was accepted: " + bad.summary());
    }
    Response fixed = api.settle(api.request(u, key));
    String seen = "invalid " + bad.status() + ", then fixed with the same key: " + fixed.summary();
    if (profile.validationErrorsStored()) {
      return Verdict.info(seen);
    }
    return fixed.success() && !Answers.isReplayMarked(fixed, profile)
        ? Verdict.pass(seen)
        : Verdict.differs(seen);
  }
}
