package dev.idemkit.conformance;

import dev.idemkit.conformance.Profile.Answer;
import dev.idemkit.conformance.RawHttp.Response;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** A used key with another request: another body, or the same body to another endpoint. */
final class MismatchChecks extends CheckGroup {

  MismatchChecks(Endpoint api) {
    super(api);
  }

  @Override
  List<Check> checks() {
    return List.of(
        new Check(
            "mismatch.body",
            "The key reused with a different request is refused ("
                + profile.mismatchAnswer()
                + "), never replayed or run.",
            this::mismatchBody),
        new Check(
            "mismatch.path",
            "The key and body sent to another endpoint never get the first endpoint's answer.",
            this::mismatchPath));
  }

  /** Judges the answer to a request sent under a key whose first request has completed. */
  @FunctionalInterface
  private interface Judge {
    Verdict judge(String unique, Response first, Response other, Findings findings)
        throws Exception;
  }

  /**
   * Sends the ordinary request, then, once it has completed, {@code bodyTemplate} to {@code
   * pathTemplate} under the same key, and judges that second answer.
   */
  private Verdict reused(String bodyTemplate, String pathTemplate, Judge judge) throws Exception {
    String u = api.unique();
    List<Map.Entry<String, String>> key = api.freshKey();
    Response first = api.settle(api.request(u, key));
    if (!first.success()) {
      return Verdict.differs("the first request failed: " + first.summary());
    }
    Response other =
        api.send(api.request(u, key, api.o.auth(), bodyTemplate, pathTemplate, List.of()));
    return judge.judge(u, first, other, new Findings().first(first));
  }

  private Verdict mismatchBody() throws Exception {
    if (api.o.mismatchBody() == null) {
      return Verdict.skip("no --mismatch-body");
    }
    return reused(
        api.o.mismatchBody(),
        api.o.path(),
        (u, first, other, findings) -> {
          findings.effect(api.effectNote(u, 1));
          // The first request has completed: a status shared with in-progress answers is a
          // mismatch here.
          Answer answer = profile.classify(other);
          if (other.success() && Arrays.equals(first.body(), other.body())) {
            findings.violation(
                "a different request was silently answered with the first one's answer");
          } else if (other.success()) {
            findings.violation("a different request under the used key ran: " + other.summary());
          } else if (answer != Answer.MISMATCH && answer != Answer.IN_PROGRESS_OR_MISMATCH) {
            findings.differs(
                "expected "
                    + profile.mismatchAnswer()
                    + ", got "
                    + other.summary()
                    + mismatchCode(other));
          }
          return findings.verdict("", other.summary());
        });
  }

  /** For a refusal with the mismatch status but not the profile's code: the code it has. */
  private String mismatchCode(Response other) {
    Profile.Code code = profile.mismatchCode();
    if (code.isNone() || other.status() != profile.mismatchStatus()) {
      return "";
    }
    return code.foundIn(other)
        .map(v -> " (" + code.path() + "=" + v + ", not " + code.value() + ")")
        .orElse(" (no " + code.path() + ")");
  }

  private Verdict mismatchPath() throws Exception {
    if (api.o.otherPath() == null) {
      return Verdict.skip("no --other-path");
    }
    return reused(
        api.o.body(),
        api.o.otherPath(),
        (u, first, other, findings) -> {
          if (Answers.same(first, other)) {
            findings.violation(
                "another endpoint answered with the first endpoint's stored answer: "
                    + other.summary());
          } else if (Answers.isReplayMarked(other, profile)) {
            findings.violation(
                "another endpoint's answer is marked as a replay: " + other.summary());
          }
          return findings.verdict(
              "", api.o.otherPath() + " answered on its own: " + other.summary());
        });
  }
}
