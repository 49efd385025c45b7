package dev.idemkit.conformance;

import dev.idemkit.conformance.Endpoint.ConfigurationError;
import dev.idemkit.conformance.KeyChecks.FirstRequest;
import dev.idemkit.conformance.RawHttp.Response;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Runs the checks against one endpoint: first makes sure the endpoint can be judged ({@link
 * #preflight()}), then runs each group of checks ({@link KeyChecks}, {@link ReplayChecks}, {@link
 * MismatchChecks}, {@link RaceChecks}, {@link ScopeChecks}, {@link ErrorChecks}) in a fixed order.
 * Each check uses fresh keys and a fresh {@code {{unique}}}, so checks do not see each other's
 * operations and a re-run of the checker starts clean.
 */
final class Checker {

  /** Every check id, in the order they run. */
  static final List<String> IDS = new Checker(null).checks().stream().map(Check::id).toList();

  /**
   * The checks whose verdict includes an effect count when there is an {@code --effect-url}:
   * without one, {@code effect.exactly-one} is skipped and the others judge by the answers alone.
   */
  static final List<String> EFFECT_COUNTED =
      List.of(
          "key.missing",
          "key.empty",
          "key.too-long",
          "key.control-char",
          "key.non-ascii",
          "key.bad-quoting",
          "key.two-headers",
          "key.forms",
          "replay.completed",
          "effect.exactly-one",
          "mismatch.body",
          "concurrent.duplicates",
          "inflight.duplicate",
          "inflight.mismatch",
          "errors.replay",
          "lost-answer.retry");

  private final Options o;
  private final Endpoint api;
  private final Profile profile;
  private FirstRequest first = FirstRequest.NONE;

  Checker(Options options) {
    this.o = options;
    this.api = new Endpoint(options);
    this.profile = api.profile;
  }

  /** The key-form finding of {@link #preflight()}, if the API takes only the other form. */
  Optional<String> keyFormFinding() {
    return Optional.ofNullable(first.keyFormFinding());
  }

  /**
   * Without an {@code --effect-url}, what cannot be proven and which of the checks to run are
   * weaker for it; empty with one.
   */
  static Optional<String> effectWarning(Options o) {
    if (o.effectUrl() != null) {
      return Optional.empty();
    }
    List<String> weakened =
        EFFECT_COUNTED.stream()
            .filter(id -> !id.equals("effect.exactly-one"))
            .filter(id -> o.only().isEmpty() || o.only().contains(id))
            .toList();
    boolean exactlyOne = o.only().isEmpty() || o.only().contains("effect.exactly-one");
    if (weakened.isEmpty() && !exactlyOne) {
      return Optional.empty();
    }
    return Optional.of(
        "no --effect-url: that each operation ran exactly once, and that refused requests"
            + " stored nothing, cannot be proven, only inferred from the answers"
            + (exactlyOne ? "; effect.exactly-one is skipped" : "")
            + (weakened.isEmpty()
                ? ""
                : "; "
                    + String.join(", ", weakened)
                    + " judge by the answers alone (a server that ran an operation twice and"
                    + " answered alike would pass them)")
            + ". Give an --effect-url that counts what a {{unique}} created to prove it");
  }

  /** Refuses {@code --only} ids that name no check (a typo would otherwise run nothing). */
  static void requireKnown(Set<String> only) {
    List<String> unknown = only.stream().filter(id -> !IDS.contains(id)).sorted().toList();
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "--only names no check " + unknown + "; the checks are " + String.join(", ", IDS));
    }
  }

  /**
   * Makes sure that the checker can judge the endpoint before any check runs: the base URL takes a
   * connection, the effect URL, if any, answers a count (zero for a value no request has used), and
   * then one ordinary request (a fresh key, the body, the credentials) succeeds. A wrong path,
   * method or credential would otherwise fail every check with the same 404 or 401.
   */
  void preflight() throws ConfigurationError {
    try (Socket connected = RawHttp.open(o.baseUrl(), o.timeout())) {
      // Reachable; nothing is sent.
    } catch (IOException e) {
      throw new ConfigurationError(
          "cannot connect to --base-url "
              + o.baseUrl()
              + ": "
              + Endpoint.reason(e)
              + "; check the URL and that the API is running there");
    }
    if (o.effectUrl() != null) {
      String fresh = api.unique();
      long n = api.effects(fresh);
      if (n != 0) {
        throw new ConfigurationError(
            "--effect-url "
                + api.resolve(Endpoint.fill(o.effectUrl(), fresh))
                + " counts "
                + n
                + " for a {{unique}} no request has used yet; it must count only what was"
                + " created with that value");
      }
    }
    Response answer;
    String finding = null;
    String key = UUID.randomUUID().toString();
    try {
      answer = api.send(api.request(api.unique(), api.keyHeader(key)));
      if (!answer.success() && mayBeTheKeysForm(answer.status())) {
        // Refused for its key's spelling? The same request with the other form tells.
        String other = UUID.randomUUID().toString();
        List<Map.Entry<String, String>> otherKey =
            List.of(Map.entry(api.keyHeaderName(), Endpoint.spelled(other, !profile.sfString())));
        Response otherForm = api.send(api.request(api.unique(), otherKey));
        if (otherForm.success()) {
          api.useOtherKeyForm();
          finding = keyFormFinding(key, answer, other);
        }
      }
    } catch (IOException e) {
      throw new ConfigurationError(
          "the first request to "
              + o.method()
              + " "
              + o.path()
              + " gave no answer: "
              + Endpoint.reason(e));
    }
    first = new FirstRequest(answer, finding);
    if (!answer.success() && finding == null) {
      throw new ConfigurationError(
          "the first request to "
              + o.method()
              + " "
              + o.path()
              + " with a fresh key answered "
              + answer.summary()
              + "; "
              + firstRequestAdvice(answer.status())
              + ": every check starts from a request that succeeds");
    }
  }

  /** A refusal that is not about the credentials, the route or the server: maybe the key's form. */
  private static boolean mayBeTheKeysForm(int status) {
    return status >= 400
        && status < 500
        && status != 401
        && status != 403
        && status != 407
        && status != 404
        && status != 405
        && status != 421;
  }

  private String keyFormFinding(String key, Response refused, String other) {
    String profileForm = profile.sfString() ? "an sf-string, \"" + key + "\"" : "bare, " + key;
    String otherForm = profile.sfString() ? "bare, " + other : "as an sf-string, \"" + other + "\"";
    return "the API refuses the key in the "
        + profile.name()
        + " profile's form ("
        + profileForm
        + "): "
        + refused.summary()
        + "; it accepts a key sent "
        + otherForm
        + (profile.sfString()
            ? ". The draft's key is an sf-string: a client that quotes its key, as the draft says,"
                + " is refused"
            : ". This profile's clients send bare keys and are refused")
        + "; the other checks send the form the API takes";
  }

  private String firstRequestAdvice(int status) {
    return switch (status) {
      case 401, 403, 407 -> "check --auth (and --header) for credentials the API accepts";
      case 404, 405, 421 -> "check --base-url, --path and --method";
      default ->
          "check --body, --content-type and --header for a request the API accepts, and that the"
              + " API takes its key in "
              + api.keyHeaderName()
              + " (a profile file's key-header names another, e.g. X-Idempotency-Key)";
    };
  }

  /**
   * Runs the checks, handing each verdict to {@code progress} as it comes.
   *
   * @throws ConfigurationError when the effect URL stops counting: the run stops there
   */
  List<CheckResult> runAll(Consumer<CheckResult> progress) throws ConfigurationError {
    List<CheckResult> results = new ArrayList<>();
    for (Check check : checks()) {
      if (!o.only().isEmpty() && !o.only().contains(check.id())) {
        continue;
      }
      long start = System.nanoTime();
      Verdict verdict;
      try {
        verdict = check.scenario().run();
      } catch (ConfigurationError e) {
        throw new ConfigurationError("the run stopped at " + check.id() + ": " + e.getMessage());
      } catch (Exception e) {
        verdict = Verdict.differs("the check could not complete: " + e);
      }
      CheckResult result =
          new CheckResult(
              check.id(),
              check.rationale(),
              verdict.status(),
              verdict.breach(),
              verdict.detail(),
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      progress.accept(result);
      results.add(result);
    }
    return results;
  }

  /** Every check, in the order they run: the key, replays, mismatches, races, scope, errors. */
  private List<Check> checks() {
    ReplayChecks replays = new ReplayChecks(api);
    return Stream.of(
            new KeyChecks(api, () -> first).checks(),
            replays.checks(),
            new MismatchChecks(api).checks(),
            new RaceChecks(api).checks(),
            new ScopeChecks(api).checks(),
            new ErrorChecks(api).checks(),
            List.of(replays.lostAnswerCheck()))
        .flatMap(List::stream)
        .toList();
  }
}
