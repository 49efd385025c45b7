package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Response;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a check found wrong, each problem of its kind: a breach of the idempotency guarantee or a
 * difference from the profile's conventions. The same problem seen in several answers is one,
 * counted ({@code 7 × …}). A failure says what the first request of the check was answered.
 */
final class Findings {

  private final Map<String, Integer> guarantee = new LinkedHashMap<>();
  private final Map<String, Integer> convention = new LinkedHashMap<>();
  private Response first;

  /** The first request's answer, which every failure names. */
  Findings first(Response answer) {
    this.first = answer;
    return this;
  }

  /** A lost or duplicated effect, or one key answered differently. */
  void violation(String problem) {
    guarantee.merge(problem, 1, Integer::sum);
  }

  /** An answer in another form than the profile's. */
  void differs(String problem) {
    convention.merge(problem, 1, Integer::sum);
  }

  /** Empty, or a problem of the guarantee's. */
  void effect(String note) {
    if (!note.isEmpty()) {
      violation(note);
    }
  }

  boolean isEmpty() {
    return guarantee.isEmpty() && convention.isEmpty();
  }

  /**
   * A pass with {@code seen} when nothing was found; else a failure that says {@code seen}, the
   * problems (the guarantee's first) and the first request's answer.
   */
  Verdict verdict(String seen, String passed) {
    if (isEmpty()) {
      return Verdict.pass(passed);
    }
    List<String> parts = new ArrayList<>();
    if (!seen.isEmpty()) {
      parts.add(seen);
    }
    guarantee.forEach((problem, n) -> parts.add(counted(problem, n)));
    convention.forEach((problem, n) -> parts.add(counted(problem, n)));
    String text = String.join("; ", parts);
    if (first != null && !text.contains(first.summary())) {
      text += "; the first request was answered " + first.summary();
    }
    return guarantee.isEmpty() ? Verdict.differs(text) : Verdict.violation(text);
  }

  private static String counted(String problem, int n) {
    return n > 1 ? n + " × " + problem : problem;
  }
}
