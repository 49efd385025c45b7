package dev.idemkit.conformance;

import dev.idemkit.conformance.Profile.Answer;
import dev.idemkit.conformance.RawHttp.Request;
import dev.idemkit.conformance.RawHttp.Response;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Requests with one key that meet: N released together, and a retry (or another request) while the
 * first still runs. Each goes on as a client would after an in-progress answer or a failure ({@link
 * Endpoint#followUp}), so a second run of the operation that happens only later is found.
 */
final class RaceChecks extends CheckGroup {

  RaceChecks(Endpoint api) {
    super(api);
  }

  @Override
  List<Check> checks() {
    return List.of(
        new Check(
            "concurrent.duplicates",
            "N identical requests released together run once: one effect, others in progress ("
                + profile.inProgressStatus()
                + ") or the same answer.",
            this::concurrentDuplicates),
        new Check(
            "inflight.duplicate",
            "A retry while the first request still runs is in progress ("
                + profile.inProgressStatus()
                + ") or waits and replays, never a second run.",
            () -> inflight(api.o.body(), false)),
        new Check(
            "inflight.mismatch",
            "A different request with the key of a running request is refused, never run.",
            () ->
                api.o.mismatchBody() == null
                    ? Verdict.skip("no --mismatch-body")
                    : inflight(api.o.mismatchBody(), true)),
        new Check(
            "conflict.retry-after",
            "An in-progress " + profile.inProgressStatus() + " says when to retry (Retry-After).",
            this::retryAfter));
  }

  private Verdict concurrentDuplicates() throws Exception {
    String u = api.unique();
    Request request = api.request(u, api.freshKey());
    List<Response> answers = api.releaseTogether(request, api.o.concurrency());
    Findings findings = new Findings();
    // The successful answers, one of each shape: bodies that differ only in timestamps or ids are
    // one group, counted.
    Map<String, List<Response>> successes = new LinkedHashMap<>();
    int inProgress = 0;
    int undecided = 0;
    int others = 0;
    for (Response r : answers) {
      switch (profile.classify(r)) {
        case SUCCESS ->
            successes.computeIfAbsent(Answers.shape(r.body()), s -> new ArrayList<>()).add(r);
        case IN_PROGRESS -> {
          inProgress++;
          api.conflicts.add(r);
        }
        case IN_PROGRESS_OR_MISMATCH -> undecided++;
        case MISMATCH -> {
          others++;
          findings.differs("an identical request refused as a mismatch: " + r.summary());
        }
        case OTHER -> {
          others++;
          findings.differs(r.summary() + Answers.notInProgress(r, profile));
        }
      }
    }
    Response executed = successes.isEmpty() ? null : successes.values().iterator().next().get(0);
    findings.first(executed);
    differentSuccesses(successes).ifPresent(findings::violation);
    int succeeded = successes.values().stream().mapToInt(List::size).sum();
    if (inProgress + undecided + others > 0 || !findings.isEmpty()) {
      api.followUp(request, executed, u, findings);
    } else {
      findings.effect(api.duplicateNote(u));
    }
    String seen =
        api.o.concurrency()
            + " released together: "
            + Answers.count(succeeded, "success")
            + ", "
            + inProgress
            + " in progress"
            + (undecided > 0 ? ", " + undecided + " in progress or mismatch" : "")
            + (others > 0 ? ", " + Answers.count(others, "other answer") : "");
    if (findings.isEmpty() && undecided > 0) {
      return inconclusive(seen);
    }
    return findings.verdict(seen, seen + api.countedNote());
  }

  /** Successful answers that are not one answer: every distinct one, grouped by shape. */
  private static Optional<String> differentSuccesses(Map<String, List<Response>> byShape) {
    long distinct =
        byShape.values().stream()
            .flatMap(List::stream)
            .map(r -> new String(r.body(), java.nio.charset.StandardCharsets.UTF_8))
            .distinct()
            .count();
    if (distinct < 2) {
      return Optional.empty();
    }
    List<String> groups = new ArrayList<>();
    for (List<Response> group : byShape.values()) {
      groups.add(
          (group.size() > 1 ? group.size() + " × " : "")
              + group.get(0).summary()
              + (group.size() > 1 && distinctBodies(group) > 1
                  ? " (differing only in timestamps or ids)"
                  : ""));
    }
    return Optional.of(
        Answers.count(distinct, "different successful answer")
            + " to one key: "
            + String.join(" and ", groups));
  }

  private static long distinctBodies(List<Response> group) {
    return group.stream().map(r -> java.util.Arrays.hashCode(r.body())).distinct().count();
  }

  private Verdict inflight(String secondBody, boolean mismatch) throws Exception {
    String u = api.unique();
    List<Map.Entry<String, String>> key = api.freshKey();
    Request firstRequest = api.request(u, key);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Response> firstCall = pool.submit(() -> api.send(firstRequest));
      Thread.sleep(api.o.inflightDelay().toMillis());
      if (firstCall.isDone()) {
        return Verdict.skip(
            "inconclusive: the first request answered within "
                + api.o.inflightDelay().toMillis()
                + " ms; slow it down (e.g. a --header the server understands) or lower"
                + " --inflight-delay-ms");
      }
      Request secondRequest =
          api.request(u, key, api.o.auth(), secondBody, api.o.path(), List.of());
      Response second = api.send(secondRequest);
      Response first = firstCall.get(api.o.timeout().toMillis(), TimeUnit.MILLISECONDS);
      String seen = "second request: " + second.summary();
      Findings findings = new Findings().first(first);
      Answer answer = profile.classify(second);
      String passed = seen;
      switch (answer) {
        case IN_PROGRESS -> {
          api.conflicts.add(second);
          passed = seen + (mismatch ? " (in progress, not the mismatch answer)" : "");
        }
        case IN_PROGRESS_OR_MISMATCH -> {}
        case MISMATCH -> {
          if (!mismatch) {
            findings.differs("an identical request refused as a mismatch");
          }
        }
        case SUCCESS -> {
          // Which answer the checker reads first says nothing: a server that makes the duplicate
          // wait may write the replay before the first request's own answer. The verdict rests
          // on the answers and the effect count: the first request's answer, byte for byte, and
          // one effect.
          if (mismatch) {
            findings.violation(
                Answers.same(first, second)
                    ? "a different request was answered with the running request's answer"
                    : "a different request under the running request's key ran");
          } else if (!Answers.same(first, second)) {
            findings.violation(
                "the operation ran a second time while the first was running"
                    + (Answers.differOnlyInTimesOrIds(first.body(), second.body())
                        ? " (its answer differs from the first request's only in timestamps or"
                            + " ids)"
                        : ""));
          } else {
            passed = seen + " (the first request's answer: waited for it, then replayed)";
          }
        }
        case OTHER ->
            findings.differs(
                "expected "
                    + (mismatch ? profile.mismatchAnswer() + " or " : "")
                    + "in progress ("
                    + profile.inProgressAnswer()
                    + ")"
                    + (mismatch ? "" : " or a replay")
                    + ", got "
                    + second.summary()
                    + Answers.notInProgress(second, profile));
      }
      if (answer == Answer.SUCCESS || (mismatch && answer == Answer.MISMATCH)) {
        findings.effect(api.duplicateNote(u));
      } else {
        // In progress, or a failure: the client goes on with the running request's key.
        api.followUp(firstRequest, first, u, findings);
      }
      if (findings.isEmpty() && answer == Answer.IN_PROGRESS_OR_MISMATCH) {
        return inconclusive(seen);
      }
      return findings.verdict(seen, passed + api.countedNote());
    } finally {
      pool.shutdownNow();
    }
  }

  private Verdict retryAfter() {
    List<Response> conflicts = api.conflicts;
    if (conflicts.isEmpty()) {
      return Verdict.skip("no in-progress answer was seen by the race checks");
    }
    // Only answers classified as in progress are here: a business 409 owes no Retry-After.
    List<String> missing = new ArrayList<>();
    for (Response r : conflicts) {
      Optional<String> value = r.header("Retry-After");
      if (value.isEmpty() || !Answers.validRetryAfter(value.get())) {
        missing.add(r.status() + " with Retry-After " + value.orElse("(none)"));
      }
    }
    String seen = Answers.count(conflicts.size(), "in-progress answer");
    if (missing.isEmpty()) {
      return Verdict.pass(
          seen + ", each with Retry-After " + conflicts.get(0).header("Retry-After").orElse(""));
    }
    String detail =
        seen + "; " + missing.size() + " without a valid Retry-After: " + missing.get(0);
    return profile.retryAfterRequired() ? Verdict.differs(detail) : Verdict.info(detail);
  }

  /** A race whose answers the profile cannot classify: said so, neither passed nor failed. */
  private Verdict inconclusive(String seen) {
    return Verdict.skip(
        "inconclusive: "
            + seen
            + "; "
            + profile.ambiguity().orElse("the profile cannot tell these answers apart")
            + " (set one in the profile file)");
  }
}
