package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Response;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/** Keys belong to a principal: another principal's same key is an operation of its own. */
final class ScopeChecks extends CheckGroup {

  ScopeChecks(Endpoint api) {
    super(api);
  }

  @Override
  List<Check> checks() {
    return List.of(
        new Check(
            "scope.principal",
            "Another principal's same key is a separate operation: no replay, nothing leaked.",
            this::principalScope));
  }

  private Verdict principalScope() throws Exception {
    Options o = api.o;
    if (o.auth2() == null) {
      return Verdict.skip("no --auth2");
    }
    // Same key, same body, other principal.
    String u1 = api.unique();
    List<Map.Entry<String, String>> k1 = api.freshKey();
    Response a = api.settle(api.request(u1, k1));
    if (!a.success()) {
      return Verdict.differs("the first principal's request failed: " + a.summary());
    }
    Findings findings = new Findings().first(a);
    OptionalLong before = api.effectsAs(o.auth2(), u1);
    Response b = api.send(api.request(u1, k1, o.auth2(), o.body(), o.path(), List.of()));
    OptionalLong after = api.effectsAs(o.auth2(), u1);
    // By effect, where the effect URL counts for the second principal too: its own operation
    // created something, as that principal sees it (a count per principal goes 0 to 1, a global
    // one 1 to 2); a replay of the first principal's operation created nothing, whatever its
    // answer looks like, and an answer identical to the first is no leak if it did.
    Optional<Boolean> ownEffect =
        before.isPresent() && after.isPresent() && b.success()
            ? Optional.of(after.getAsLong() > before.getAsLong())
            : Optional.empty();
    leak("same key and body", Endpoint.fill(o.body(), u1), a, b, ownEffect)
        .ifPresent(findings::violation);
    if (findings.isEmpty() && ownEffect.equals(Optional.of(false))) {
      findings.violation(
          "same key and body: the second principal's request created nothing (--effect-url,"
              + " asked with --auth2, counts "
              + after.getAsLong()
              + " before and after it): it got the first principal's operation: "
              + b.summary());
    }
    // Same key, another body, other principal: a mismatch answer would reveal the key exists.
    if (o.mismatchBody() != null) {
      String u2 = api.unique();
      List<Map.Entry<String, String>> k2 = api.freshKey();
      Response c = api.settle(api.request(u2, k2));
      Response d = api.send(api.request(u2, k2, o.auth2(), o.mismatchBody(), o.path(), List.of()));
      if (c.success()) {
        leak("same key, another body", Endpoint.fill(o.mismatchBody(), u2), c, d, Optional.empty())
            .ifPresent(findings::violation);
      }
    }
    return findings.verdict("", "the second principal got its own answer: " + b.summary());
  }

  /**
   * What in the second principal's answer shows it got the first principal's operation. Bytes alone
   * do not: an API may render the stored resource anew for whoever asks (a timestamp, the viewer),
   * so the resource's identity is compared too (see {@link #sameResource}). {@code ownEffect}:
   * whether the effect URL, asked as the second principal, counted an operation of its own; empty
   * when it could not tell.
   */
  private Optional<String> leak(
      String what, String sentBody, Response first, Response other, Optional<Boolean> ownEffect) {
    Optional<String> shared = sameResource(sentBody, first, other);
    // Identical bytes are a replay, unless the effect count shows an operation of its own (an
    // answer that names nothing the server made is the same for any two operations).
    if (Arrays.equals(first.body(), other.body()) && !ownEffect.orElse(false)) {
      return Optional.of(
          what + ": the second principal got the first principal's answer: " + other.summary());
    } else if (shared.isPresent()) {
      return Optional.of(
          what
              + ": the second principal got the first principal's resource, re-rendered ("
              + shared.get()
              + "): "
              + other.summary());
    } else if (Answers.isReplayMarked(other, profile)) {
      return Optional.of(what + ": the second principal's answer is marked as a replay");
    } else if (revealsKey(other)) {
      return Optional.of(
          what + ": the answer reveals the first principal's key: " + other.summary());
    }
    return Optional.empty();
  }

  /**
   * The first answer's resource, if the other answer names it too: the same {@code Location}, or
   * every identifier in the first answer's JSON (a field {@code id}, or one whose name ends in
   * {@code Id}, {@code _id} or {@code ID}) that the server made (its value is not in the request
   * body, as an {@code accountId} sent in the request is) found with the same value at the same
   * place in the other. Every one, not any one: two principals of one tenant may both see its
   * {@code tenantId}; their own operations still differ in the resource's own id.
   */
  private static Optional<String> sameResource(String sentBody, Response first, Response other) {
    Optional<String> location = first.header("Location");
    if (location.isPresent() && location.equals(other.header("Location"))) {
      return Optional.of("the same Location " + location.get());
    }
    Map<String, String> made = new LinkedHashMap<>();
    Map<String, String> theirs = new LinkedHashMap<>();
    try {
      identifiers("", JsonDocuments.parse(first.bodyText()), made);
      identifiers("", JsonDocuments.parse(other.bodyText()), theirs);
    } catch (RuntimeException notJson) {
      return Optional.empty();
    }
    made.values().removeIf(value -> value.isEmpty() || echoes(sentBody, value));
    if (made.isEmpty()
        || !made.entrySet().stream().allMatch(e -> e.getValue().equals(theirs.get(e.getKey())))) {
      return Optional.empty();
    }
    List<String> named = new ArrayList<>();
    made.forEach((path, value) -> named.add(path + " " + value));
    return Optional.of("the same " + String.join(", ", named));
  }

  /** Whether {@code value} is in the request body as a value of its own (sent, not made). */
  private static boolean echoes(String sentBody, String value) {
    return sentBody.contains("\"" + value + "\"")
        || Pattern.compile("(?<![\\w.])" + Pattern.quote(value) + "(?![\\w.])")
            .matcher(sentBody)
            .find();
  }

  /** Collects the identifier fields of a parsed JSON document by their dotted paths. */
  private static void identifiers(String at, Object node, Map<String, String> into) {
    if (node instanceof Map<?, ?> map) {
      map.forEach(
          (name, value) -> {
            String field = String.valueOf(name);
            String path = at.isEmpty() ? field : at + "." + field;
            boolean identifier =
                field.equalsIgnoreCase("id")
                    || field.endsWith("Id")
                    || field.endsWith("_id")
                    || field.endsWith("ID");
            if (identifier && (value instanceof String || value instanceof Number)) {
              into.put(path, String.valueOf(value));
            } else {
              identifiers(path, value, into);
            }
          });
    } else if (node instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        identifiers(at + (at.isEmpty() ? "" : ".") + i, list.get(i), into);
      }
    }
  }

  /**
   * An in-progress or reused-key answer to another principal says the key exists. A bare 400 for a
   * reused key (no code) cannot be told from any other 400, so it is not counted.
   */
  private boolean revealsKey(Response other) {
    return switch (profile.classify(other)) {
      case IN_PROGRESS, IN_PROGRESS_OR_MISMATCH -> true;
      case MISMATCH -> !profile.mismatchCode().isNone() || profile.mismatchStatus() != 400;
      case SUCCESS, OTHER -> false;
    };
  }
}
