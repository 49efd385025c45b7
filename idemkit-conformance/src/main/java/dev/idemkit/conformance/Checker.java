package dev.idemkit.conformance;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.CheckResult.Status;
import dev.idemkit.conformance.Profile.Answer;
import dev.idemkit.conformance.RawHttp.Request;
import dev.idemkit.conformance.RawHttp.Response;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Runs the checks against one endpoint. Each check uses fresh keys and a fresh {@code {{unique}}},
 * so checks do not see each other's operations and a re-run of the checker starts clean.
 */
final class Checker {

  static final String KEY = "Idempotency-Key";

  /** A check: a stable id, its rationale, and the scenario that decides it. */
  private record Check(String id, String rationale, Scenario scenario) {}

  @FunctionalInterface
  private interface Scenario {
    Verdict run() throws Exception;
  }

  /** What a scenario decided. */
  record Verdict(Status status, String detail) {
    static Verdict pass(String detail) {
      return new Verdict(Status.PASS, detail);
    }

    static Verdict fail(String detail) {
      return new Verdict(Status.FAIL, detail);
    }

    static Verdict skip(String detail) {
      return new Verdict(Status.SKIP, detail);
    }

    static Verdict info(String detail) {
      return new Verdict(Status.INFO, detail);
    }
  }

  /**
   * The checker cannot do what it was asked (the API takes no connection, the effect URL does not
   * count): no verdict about the API can be given, and none is.
   */
  static final class ConfigurationError extends Exception {
    ConfigurationError(String message) {
      super(message);
    }
  }

  private final Options o;
  private final Profile profile;
  private final String run = Long.toString(System.currentTimeMillis(), 36);
  private final AtomicInteger counter = new AtomicInteger();

  /** Every in-progress answer the race checks saw, for {@code conflict.retry-after}. */
  private final List<Response> conflicts = new CopyOnWriteArrayList<>();

  /**
   * Whether keys go out as sf-strings ({@code "k"}) or bare ({@code k}): the profile's form, unless
   * the first request found that the API takes only the other one ({@link #keyForm}).
   */
  private boolean sfString;

  /** The first request's answer with the profile's key form, for {@code key.form}. */
  private Response firstAnswer;

  /**
   * Set when the API refused the profile's key form and accepted the other: the finding, reported
   * by {@code key.form} alone; the other checks then send the form the API takes, so they judge
   * what they are for instead of all failing on the key's spelling.
   */
  private String keyFormFinding;

  Checker(Options options) {
    this.o = options;
    this.profile = options == null ? Profile.IETF : options.profile();
    this.sfString = profile.sfString();
  }

  /** The key-form finding of {@link #preflight()}, if the API takes only the other form. */
  Optional<String> keyFormFinding() {
    return Optional.ofNullable(keyFormFinding);
  }

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
          "effect.exactly-one",
          "mismatch.body",
          "concurrent.duplicates",
          "inflight.duplicate",
          "inflight.mismatch",
          "lost-answer.retry");

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
  static void requireKnown(java.util.Set<String> only) {
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
              + reason(e)
              + "; check the URL and that the API is running there");
    }
    if (o.effectUrl() != null) {
      String fresh = unique();
      long n = effects(fresh);
      if (n != 0) {
        throw new ConfigurationError(
            "--effect-url "
                + resolve(fill(o.effectUrl(), fresh))
                + " counts "
                + n
                + " for a {{unique}} no request has used yet; it must count only what was"
                + " created with that value");
      }
    }
    Response first;
    String key = UUID.randomUUID().toString();
    try {
      first = send(request(unique(), keyHeader(key), o.auth(), o.body(), o.path(), List.of()));
      if (!first.success() && mayBeTheKeysForm(first.status())) {
        // Refused for its key's spelling? The same request with the other form tells.
        String other = UUID.randomUUID().toString();
        List<Map.Entry<String, String>> otherKey =
            List.of(Map.entry(KEY, spelled(other, !profile.sfString())));
        Response otherForm =
            send(request(unique(), otherKey, o.auth(), o.body(), o.path(), List.of()));
        if (otherForm.success()) {
          sfString = !profile.sfString();
          keyFormFinding = keyFormFinding(key, first, other);
        }
      }
    } catch (IOException e) {
      throw new ConfigurationError(
          "the first request to " + o.method() + " " + o.path() + " gave no answer: " + reason(e));
    }
    firstAnswer = first;
    if (!first.success() && keyFormFinding == null) {
      throw new ConfigurationError(
          "the first request to "
              + o.method()
              + " "
              + o.path()
              + " with a fresh key answered "
              + first.summary()
              + "; "
              + firstRequestAdvice(first.status())
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

  private static String firstRequestAdvice(int status) {
    return switch (status) {
      case 401, 403, 407 -> "check --auth (and --header) for credentials the API accepts";
      case 404, 405, 421 -> "check --base-url, --path and --method";
      default -> "check --body, --content-type and --header for a request the API accepts";
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
        verdict = Verdict.fail("the check could not complete: " + e);
      }
      CheckResult result =
          new CheckResult(
              check.id(),
              check.rationale(),
              verdict.status(),
              verdict.detail(),
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      progress.accept(result);
      results.add(result);
    }
    return results;
  }

  private List<Check> checks() {
    String p = profile.name();
    return List.of(
        new Check(
            "key.form",
            "A key in the profile's form ("
                + (profile.sfString() ? "an sf-string, \"k\"" : "bare, k")
                + ") is accepted.",
            this::keyForm),
        new Check(
            "key.missing",
            "An endpoint that requires a key refuses a request without one and stores nothing.",
            this::missingKey),
        new Check(
            "key.empty",
            "An empty key is malformed: refused (" + profile.malformedStatus() + "), no effect.",
            () -> malformed(List.of(Map.entry(KEY, "")))),
        new Check(
            "key.too-long",
            "A key longer than "
                + profile.maxKeyLength()
                + " characters is refused, not truncated.",
            () -> malformed(keyHeader("k".repeat(profile.maxKeyLength() + 1)))),
        new Check(
            "key.control-char",
            "A key with a control character is refused, never stored.",
            () -> malformed(keyHeader("ctl\u0007" + UUID.randomUUID()))),
        new Check(
            "key.non-ascii",
            "A key with a non-ASCII character is refused, never stored.",
            () -> malformed(keyHeader("cl\u00e9-" + UUID.randomUUID()))),
        new Check(
            "key.bad-quoting",
            "An sf-string key with broken quoting is malformed (" + p + ").",
            () ->
                profile.sfString()
                    ? malformed(List.of(Map.entry(KEY, "\"" + UUID.randomUUID())))
                    : Verdict.skip("the " + p + " profile uses bare keys")),
        new Check(
            "key.two-headers",
            "Two Idempotency-Key headers are ambiguous: refused, nothing runs.",
            () ->
                malformed(
                    List.of(
                        Map.entry(KEY, keyValue(UUID.randomUUID().toString())),
                        Map.entry(KEY, keyValue(UUID.randomUUID().toString()))))),
        new Check(
            "key.max-length",
            "A key of exactly " + profile.maxKeyLength() + " characters is accepted.",
            this::maxLength),
        new Check(
            "key.forms",
            "The sf-string and the bare form of one key never make two operations.",
            () ->
                keyFormFinding != null
                    ? Verdict.skip("the API takes only one of the two forms (key.form)")
                    : profile.sfString()
                        ? keyForms()
                        : Verdict.skip(
                            "the "
                                + p
                                + " profile takes keys literally: a quoted key is another key")),
        new Check(
            "replay.completed",
            "A retry of a completed request gets the first answer: status, body bytes, Location.",
            this::replay),
        new Check(
            "effect.exactly-one",
            "A request and its retries have exactly one effect (counted via the effect URL).",
            this::exactlyOne),
        new Check(
            "mismatch.body",
            "The key reused with a different request is refused ("
                + profile.mismatchAnswer()
                + "), never replayed or run.",
            this::mismatchBody),
        new Check(
            "mismatch.path",
            "The key and body sent to another endpoint never get the first endpoint's answer.",
            this::mismatchPath),
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
            this::inflightDuplicate),
        new Check(
            "inflight.mismatch",
            "A different request with the key of a running request is refused, never run.",
            this::inflightMismatch),
        new Check(
            "conflict.retry-after",
            "An in-progress " + profile.inProgressStatus() + " says when to retry (Retry-After).",
            this::retryAfter),
        new Check(
            "scope.principal",
            "Another principal's same key is a separate operation: no replay, nothing leaked.",
            this::principalScope),
        new Check(
            "errors.replay",
            "Reported: whether an error answer is stored and replayed, or the request runs again.",
            this::errorReplay),
        new Check(
            "errors.validation-not-stored",
            "A request refused by validation stores nothing: fixed, the same key runs as new.",
            this::validationNotStored),
        new Check(
            "lost-answer.retry",
            "After the answer was lost in transit (server committed), the retry gets it; one effect.",
            this::lostAnswer));
  }

  // ---------------------------------------------------------------- the checks

  /** Decided by the first request ({@link #preflight()}), which sends the profile's form. */
  private Verdict keyForm() {
    if (keyFormFinding != null) {
      return Verdict.fail(keyFormFinding);
    }
    if (firstAnswer == null) {
      return Verdict.skip("no first request was sent");
    }
    return Verdict.pass("the first request's key, in this form: " + firstAnswer.summary());
  }

  private Verdict missingKey() throws Exception {
    String u = unique();
    Response r = send(request(u, List.of(), o.auth(), o.body(), o.path(), List.of()));
    String effect = effectNote(u, 0);
    if (!profile.requireKey()) {
      return Verdict.info("keys are optional in " + profile.name() + "; answered " + r.summary());
    }
    if (r.status() != profile.missingKeyStatus()) {
      return Verdict.fail(
          "expected " + profile.missingKeyStatus() + ", got " + r.summary() + effectSuffix(effect));
    }
    return effect.isEmpty()
        ? Verdict.pass(r.summary() + countedNote())
        : Verdict.fail(r.summary() + "; " + effect);
  }

  private Verdict malformed(List<Map.Entry<String, String>> keyHeaders) throws Exception {
    String u = unique();
    Response r = send(request(u, keyHeaders, o.auth(), o.body(), o.path(), List.of()));
    String effect = effectNote(u, 0);
    if (r.status() != profile.malformedStatus()) {
      return Verdict.fail(
          "sent "
              + describe(keyHeaders)
              + ": expected "
              + profile.malformedStatus()
              + ", got "
              + r.summary()
              + effectSuffix(effect));
    }
    if (!effect.isEmpty()) {
      return Verdict.fail("refused, but " + effect);
    }
    return Verdict.pass("sent " + describe(keyHeaders) + ": " + r.summary());
  }

  private Verdict maxLength() throws Exception {
    String key = "m" + UUID.randomUUID().toString().replace("-", "");
    key = key + "x".repeat(profile.maxKeyLength() - key.length());
    Response r = send(request(unique(), keyHeader(key), o.auth(), o.body(), o.path(), List.of()));
    return r.success()
        ? Verdict.pass(r.summary())
        : Verdict.fail("a " + key.length() + "-character key was refused: " + r.summary());
  }

  /**
   * An sf-string key and its bare spelling (which the draft's servers may read as the same key).
   */
  private Verdict keyForms() throws Exception {
    String u = unique();
    String key = UUID.randomUUID().toString();
    String first = keyValue(key);
    String other = key;
    Response a =
        send(request(u, List.of(Map.entry(KEY, first)), o.auth(), o.body(), o.path(), List.of()));
    if (!a.success()) {
      return Verdict.fail(
          "the key in the profile's form (" + first + ") was refused: " + a.summary());
    }
    Response b =
        send(request(u, List.of(Map.entry(KEY, other)), o.auth(), o.body(), o.path(), List.of()));
    if (o.effectUrl() != null) {
      // Counted: the verdict is the number of operations; replayed bytes are replay.completed's.
      String effect = effectNote(u, 1);
      if (!effect.isEmpty()) {
        return Verdict.fail(
            "the other form (" + other + ") answered " + b.summary() + "; " + effect);
      }
    } else if (b.success() && !Arrays.equals(a.body(), b.body())) {
      return Verdict.fail(
          "the other form (" + other + ") got another answer, a second operation: " + b.summary());
    }
    String how = b.success() ? "the same operation (replayed)" : "refused (" + b.status() + ")";
    return Verdict.pass(first + " then " + other + ": " + how);
  }

  private Verdict replay() throws Exception {
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Response first = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
    if (!first.success()) {
      return Verdict.fail("the first request failed: " + first.summary());
    }
    List<String> problems = new ArrayList<>();
    for (int i = 1; i <= 2; i++) {
      Response again = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
      problems.addAll(sameAnswer("retry " + i, first, again));
    }
    Optional<String> marker = markerProblem(first, false);
    marker.ifPresent(problems::add);
    if (!problems.isEmpty()) {
      return Verdict.fail(String.join("; ", problems));
    }
    return Verdict.pass(
        first.status()
            + ", "
            + first.body().length
            + " body bytes"
            + first.header("Location").map(l -> ", Location " + l).orElse("")
            + " replayed twice"
            + replayMarkerNote());
  }

  private Verdict exactlyOne() throws Exception {
    if (o.effectUrl() == null) {
      return Verdict.skip("no --effect-url to count effects with");
    }
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    for (int i = 0; i < 3; i++) {
      Response r = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
      if (!r.success()) {
        return Verdict.fail("attempt " + (i + 1) + " failed: " + r.summary());
      }
    }
    long n = effects(u);
    return n == 1
        ? Verdict.pass("3 attempts, 1 effect")
        : Verdict.fail("3 attempts with one key, " + n + " effects");
  }

  private Verdict mismatchBody() throws Exception {
    if (o.mismatchBody() == null) {
      return Verdict.skip("no --mismatch-body");
    }
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Response first = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
    if (!first.success()) {
      return Verdict.fail("the first request failed: " + first.summary());
    }
    Response other = send(request(u, key, o.auth(), o.mismatchBody(), o.path(), List.of()));
    String effect = effectNote(u, 1);
    if (other.success() && Arrays.equals(first.body(), other.body())) {
      return Verdict.fail("a different request was silently answered with the first one's answer");
    }
    // The first request has completed: a status shared with in-progress answers is a mismatch here.
    Answer answer = profile.classify(other);
    if (answer != Answer.MISMATCH && answer != Answer.IN_PROGRESS_OR_MISMATCH) {
      return Verdict.fail(
          "expected "
              + profile.mismatchAnswer()
              + ", got "
              + other.summary()
              + effectSuffix(effect));
    }
    return effect.isEmpty() ? Verdict.pass(other.summary()) : Verdict.fail(effect);
  }

  private Verdict mismatchPath() throws Exception {
    if (o.otherPath() == null) {
      return Verdict.skip("no --other-path");
    }
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Response first = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
    if (!first.success()) {
      return Verdict.fail("the first request failed: " + first.summary());
    }
    Response other = send(request(u, key, o.auth(), o.body(), o.otherPath(), List.of()));
    if (Arrays.equals(first.body(), other.body()) && other.status() == first.status()) {
      return Verdict.fail(
          "another endpoint answered with the first endpoint's stored answer: " + other.summary());
    }
    if (isReplayMarked(other)) {
      return Verdict.fail("another endpoint's answer is marked as a replay: " + other.summary());
    }
    return Verdict.pass(o.otherPath() + " answered on its own: " + other.summary());
  }

  private Verdict concurrentDuplicates() throws Exception {
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Request request = request(u, key, o.auth(), o.body(), o.path(), List.of());
    List<Response> answers = releaseTogether(request, o.concurrency());
    // The same wrong answer to several of the N is one problem, counted.
    Map<String, Integer> problems = new LinkedHashMap<>();
    byte[] executed = null;
    int successes = 0;
    int inProgress = 0;
    int undecided = 0;
    for (Response r : answers) {
      switch (profile.classify(r)) {
        case SUCCESS -> {
          successes++;
          if (executed == null) {
            executed = r.body();
          } else if (!Arrays.equals(executed, r.body())) {
            problems.merge(
                "two different successful answers: " + summary(executed) + " and " + r.summary(),
                1,
                Integer::sum);
          }
        }
        case IN_PROGRESS -> {
          inProgress++;
          conflicts.add(r);
        }
        case IN_PROGRESS_OR_MISMATCH -> undecided++;
        case MISMATCH ->
            problems.merge(
                "an identical request refused as a mismatch: " + r.summary(), 1, Integer::sum);
        case OTHER -> problems.merge(r.summary() + notInProgress(r), 1, Integer::sum);
      }
    }
    Response settled = settle(request);
    if (!settled.success()) {
      problems.put("after the race, the retry still failed: " + settled.summary(), 1);
    } else if (executed != null && !Arrays.equals(executed, settled.body())) {
      problems.put("the retry after the race got another answer: " + settled.summary(), 1);
    }
    String effect = effectNote(u, 1);
    if (!effect.isEmpty()) {
      problems.put(effect, 1);
    }
    String seen =
        o.concurrency()
            + " released together: "
            + successes
            + " success, "
            + inProgress
            + " in progress"
            + (undecided > 0 ? ", " + undecided + " in progress or mismatch" : "");
    if (!problems.isEmpty()) {
      List<String> counted = new ArrayList<>();
      problems.forEach((problem, n) -> counted.add(n > 1 ? n + " × " + problem : problem));
      return Verdict.fail(seen + "; " + String.join("; ", counted));
    }
    return undecided > 0 ? inconclusive(seen) : Verdict.pass(seen + countedNote());
  }

  private Verdict inflightDuplicate() throws Exception {
    return inflight(o.body(), false);
  }

  private Verdict inflightMismatch() throws Exception {
    if (o.mismatchBody() == null) {
      return Verdict.skip("no --mismatch-body");
    }
    return inflight(o.mismatchBody(), true);
  }

  private Verdict inflight(String secondBody, boolean mismatch) throws Exception {
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Response> firstCall =
          pool.submit(() -> send(request(u, key, o.auth(), o.body(), o.path(), List.of())));
      Thread.sleep(o.inflightDelay().toMillis());
      if (firstCall.isDone()) {
        return Verdict.skip(
            "inconclusive: the first request answered within "
                + o.inflightDelay().toMillis()
                + " ms; slow it down (e.g. a --header the server understands) or lower --inflight-delay-ms");
      }
      Response second = send(request(u, key, o.auth(), secondBody, o.path(), List.of()));
      Response first = firstCall.get(o.timeout().toMillis(), TimeUnit.MILLISECONDS);
      String effect = effectNote(u, 1);
      String seen = "second request: " + second.summary();
      Answer answer = profile.classify(second);
      if (answer == Answer.IN_PROGRESS) {
        conflicts.add(second);
        return effect.isEmpty()
            ? Verdict.pass(seen + (mismatch ? " (in progress, not the mismatch answer)" : ""))
            : Verdict.fail(seen + "; " + effect);
      }
      if (answer == Answer.IN_PROGRESS_OR_MISMATCH) {
        return effect.isEmpty() ? inconclusive(seen) : Verdict.fail(seen + "; " + effect);
      }
      if (mismatch) {
        if (answer == Answer.MISMATCH) {
          return effect.isEmpty() ? Verdict.pass(seen) : Verdict.fail(seen + "; " + effect);
        }
        return Verdict.fail(
            "expected "
                + profile.mismatchAnswer()
                + " or in progress ("
                + profile.inProgressStatus()
                + "); "
                + seen
                + notInProgress(second)
                + effectSuffix(effect));
      }
      if (second.success()) {
        // Which answer the checker reads first says nothing: a server that makes the duplicate wait
        // may write the replay before the first request's own answer. The verdict rests on the
        // answers and the effect count: the first request's answer, byte for byte, and one effect.
        if (second.status() == first.status()
            && Arrays.equals(first.body(), second.body())
            && effect.isEmpty()) {
          return Verdict.pass(seen + " (the first request's answer: waited for it, then replayed)");
        }
        return Verdict.fail(
            "the operation ran a second time while the first was running: first "
                + first.summary()
                + ", "
                + seen
                + effectSuffix(effect));
      }
      return Verdict.fail(
          "expected in progress ("
              + profile.inProgressStatus()
              + ") or a replay; "
              + seen
              + notInProgress(second)
              + effectSuffix(effect));
    } finally {
      pool.shutdownNow();
    }
  }

  private Verdict retryAfter() {
    if (conflicts.isEmpty()) {
      return Verdict.skip("no in-progress answer was seen by the race checks");
    }
    // Only answers classified as in progress are here: a business 409 owes no Retry-After.
    List<String> missing = new ArrayList<>();
    for (Response r : conflicts) {
      Optional<String> value = r.header("Retry-After");
      if (value.isEmpty() || !validRetryAfter(value.get())) {
        missing.add(r.status() + " with Retry-After " + value.orElse("(none)"));
      }
    }
    String seen = conflicts.size() + " in-progress answers";
    if (missing.isEmpty()) {
      return Verdict.pass(
          seen + ", each with Retry-After " + conflicts.get(0).header("Retry-After").orElse(""));
    }
    String detail =
        seen + "; " + missing.size() + " without a valid Retry-After: " + missing.get(0);
    return profile.retryAfterRequired() ? Verdict.fail(detail) : Verdict.info(detail);
  }

  private Verdict principalScope() throws Exception {
    if (o.auth2() == null) {
      return Verdict.skip("no --auth2");
    }
    List<String> problems = new ArrayList<>();
    // Same key, same body, other principal.
    String u1 = unique();
    List<Map.Entry<String, String>> k1 = freshKey();
    Response a = send(request(u1, k1, o.auth(), o.body(), o.path(), List.of()));
    if (!a.success()) {
      return Verdict.fail("the first principal's request failed: " + a.summary());
    }
    OptionalLong before = effectsAs(o.auth2(), u1);
    Response b = send(request(u1, k1, o.auth2(), o.body(), o.path(), List.of()));
    OptionalLong after = effectsAs(o.auth2(), u1);
    // By effect, where the effect URL counts for the second principal too: its own operation
    // created something, as that principal sees it (a count per principal goes 0 to 1, a global
    // one 1 to 2); a replay of the first principal's operation created nothing, whatever its
    // answer looks like, and an answer identical to the first is no leak if it did.
    Optional<Boolean> ownEffect =
        before.isPresent() && after.isPresent() && b.success()
            ? Optional.of(after.getAsLong() > before.getAsLong())
            : Optional.empty();
    problems.addAll(leaks("same key and body", fill(o.body(), u1), a, b, ownEffect));
    if (problems.isEmpty() && ownEffect.equals(Optional.of(false))) {
      problems.add(
          "same key and body: the second principal's request created nothing (--effect-url,"
              + " asked with --auth2, counts "
              + after.getAsLong()
              + " before and after it): it got the first principal's operation: "
              + b.summary());
    }
    // Same key, another body, other principal: a mismatch answer would reveal the key exists.
    if (o.mismatchBody() != null) {
      String u2 = unique();
      List<Map.Entry<String, String>> k2 = freshKey();
      Response c = send(request(u2, k2, o.auth(), o.body(), o.path(), List.of()));
      Response d = send(request(u2, k2, o.auth2(), o.mismatchBody(), o.path(), List.of()));
      if (c.success()) {
        problems.addAll(
            leaks("same key, another body", fill(o.mismatchBody(), u2), c, d, Optional.empty()));
      }
    }
    return problems.isEmpty()
        ? Verdict.pass("the second principal got its own answer: " + b.summary())
        : Verdict.fail(String.join("; ", problems));
  }

  /**
   * What in the second principal's answer shows it got the first principal's operation. Bytes alone
   * do not: an API may render the stored resource anew for whoever asks (a timestamp, the viewer),
   * so the resource's identity is compared too (see {@link #sameResource}). {@code ownEffect}:
   * whether the effect URL, asked as the second principal, counted an operation of its own; empty
   * when it could not tell.
   */
  private List<String> leaks(
      String what, String sentBody, Response first, Response other, Optional<Boolean> ownEffect) {
    List<String> problems = new ArrayList<>();
    Optional<String> shared = sameResource(sentBody, first, other);
    // Identical bytes are a replay, unless the effect count shows an operation of its own (an
    // answer that names nothing the server made is the same for any two operations).
    if (Arrays.equals(first.body(), other.body()) && !ownEffect.orElse(false)) {
      problems.add(
          what + ": the second principal got the first principal's answer: " + other.summary());
    } else if (shared.isPresent()) {
      problems.add(
          what
              + ": the second principal got the first principal's resource, re-rendered ("
              + shared.get()
              + "): "
              + other.summary());
    } else if (isReplayMarked(other)) {
      problems.add(what + ": the second principal's answer is marked as a replay");
    } else if (revealsKey(other)) {
      problems.add(what + ": the answer reveals the first principal's key: " + other.summary());
    }
    return problems;
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
      identifiers("", Json.parse(first.bodyText()), made);
      identifiers("", Json.parse(other.bodyText()), theirs);
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

  private Verdict errorReplay() throws Exception {
    if (o.errorBody() == null && o.errorHeaders().isEmpty()) {
      return Verdict.skip("no --error-body or --error-header");
    }
    String u = unique();
    String body = o.errorBody() == null ? o.body() : o.errorBody();
    List<Map.Entry<String, String>> key = freshKey();
    Response first = send(request(u, key, o.auth(), body, o.path(), o.errorHeaders()));
    if (first.success()) {
      return Verdict.info("the error request succeeded: " + first.summary());
    }
    Response again = send(request(u, key, o.auth(), body, o.path(), o.errorHeaders()));
    boolean replayed =
        again.status() == first.status() && Arrays.equals(first.body(), again.body());
    return Verdict.info(
        "first "
            + first.summary()
            + "; the retry "
            + (replayed
                ? "got it replayed" + (isReplayMarked(again) ? " (marked)" : "")
                : "ran again: " + again.summary()));
  }

  private Verdict validationNotStored() throws Exception {
    if (o.invalidBody() == null) {
      return Verdict.skip("no --invalid-body");
    }
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Response bad = send(request(u, key, o.auth(), o.invalidBody(), o.path(), List.of()));
    if (bad.success()) {
      return Verdict.skip("the invalid body was accepted: " + bad.summary());
    }
    Response fixed = send(request(u, key, o.auth(), o.body(), o.path(), List.of()));
    String seen = "invalid " + bad.status() + ", then fixed with the same key: " + fixed.summary();
    if (profile.validationErrorsStored()) {
      return Verdict.info(seen);
    }
    return fixed.success() && !isReplayMarked(fixed) ? Verdict.pass(seen) : Verdict.fail(seen);
  }

  private Verdict lostAnswer() throws Exception {
    String u = unique();
    List<Map.Entry<String, String>> key = freshKey();
    Request request = request(u, key, o.auth(), o.body(), o.path(), List.of());
    Response lost;
    try (LossyProxy proxy = new LossyProxy(o.baseUrl(), o.timeout())) {
      // Sent to the proxy, but for the server: its Host, so a server that routes by host name
      // (virtual hosts behind one address) gets it where the checker's other requests go.
      List<Map.Entry<String, String>> headers = new ArrayList<>();
      headers.add(Map.entry("Host", RawHttp.host(request.uri())));
      headers.addAll(request.headers());
      Request viaProxy =
          new Request(
              request.method(),
              proxy.uri().resolve(request.uri().getRawPath() + query(request.uri())),
              headers,
              request.body());
      try {
        Response reached = send(viaProxy);
        return Verdict.fail("the proxy failed to lose the answer: " + reached.summary());
      } catch (IOException expected) {
        // The answer was lost, as intended.
      }
      lost = proxy.swallowedAnswer();
    }
    if (!lost.success()) {
      return Verdict.fail(
          "the first request (answer lost) failed at the server: " + lost.summary());
    }
    Response retry = send(request);
    List<String> problems = new ArrayList<>(sameAnswer("the retry", lost, retry));
    String effect = effectNote(u, 1);
    if (!effect.isEmpty()) {
      problems.add(effect);
    }
    return problems.isEmpty()
        ? Verdict.pass(
            "lost " + lost.status() + ", the retry got the same " + retry.status() + countedNote())
        : Verdict.fail(String.join("; ", problems));
  }

  // ---------------------------------------------------------------- helpers

  private List<String> sameAnswer(String what, Response first, Response again) {
    List<String> problems = new ArrayList<>();
    if (again.status() != first.status()) {
      problems.add(
          what
              + ": status "
              + again.status()
              + " instead of "
              + first.status()
              + " ("
              + again.summary()
              + ")");
      return problems;
    }
    if (!Arrays.equals(first.body(), again.body())) {
      problems.add(
          what + ": other body bytes: " + again.summary() + " instead of " + first.summary());
    }
    if (!first.header("Location").equals(again.header("Location"))) {
      problems.add(
          what
              + ": Location "
              + again.header("Location").orElse("(none)")
              + " instead of "
              + first.header("Location").orElse("(none)"));
    }
    String ct1 = first.header("Content-Type").orElse("");
    String ct2 = again.header("Content-Type").orElse("");
    if (!ct1.equalsIgnoreCase(ct2)) {
      problems.add(what + ": Content-Type " + ct2 + " instead of " + ct1);
    }
    markerProblem(again, true).ifPresent(m -> problems.add(what + ": " + m));
    return problems;
  }

  private Optional<String> markerProblem(Response r, boolean replay) {
    if (profile.replayHeader().isEmpty()) {
      return Optional.empty();
    }
    boolean marked = isReplayMarked(r);
    if (replay && !marked) {
      return Optional.of("no replay marker '" + profile.replayHeader() + "'");
    }
    if (!replay && marked) {
      return Optional.of("the first answer is marked as a replay");
    }
    return Optional.empty();
  }

  private boolean isReplayMarked(Response r) {
    String marker =
        profile.replayHeader().isEmpty() ? "Idempotent-Replayed: true" : profile.replayHeader();
    int colon = marker.indexOf(':');
    String name = marker.substring(0, colon).trim();
    String value = marker.substring(colon + 1).trim();
    return r.header(name).map(v -> v.equalsIgnoreCase(value)).orElse(false);
  }

  private String replayMarkerNote() {
    return profile.replayHeader().isEmpty() ? "" : ", marked " + profile.replayHeader();
  }

  private static boolean validRetryAfter(String value) {
    String v = value.trim();
    if (v.matches("\\d+")) {
      return true;
    }
    try {
      java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.parse(v);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * Sends N copies of a request so that they reach the server together: each connection gets all
   * but the last byte of its request, then a latch releases the N last bytes at once.
   */
  private List<Response> releaseTogether(Request request, int n) throws Exception {
    byte[] bytes = request.bytes();
    List<Socket> sockets = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      for (int i = 0; i < n; i++) {
        Socket s = RawHttp.open(request.uri(), o.timeout());
        s.getOutputStream().write(bytes, 0, bytes.length - 1);
        s.getOutputStream().flush();
        sockets.add(s);
      }
      CountDownLatch go = new CountDownLatch(1);
      List<CompletableFuture<Response>> answers = new ArrayList<>();
      for (Socket s : sockets) {
        answers.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    go.await();
                    OutputStream out = s.getOutputStream();
                    long start = System.nanoTime();
                    out.write(bytes, bytes.length - 1, 1);
                    out.flush();
                    return RawHttp.read(s.getInputStream(), start);
                  } catch (Exception e) {
                    throw new IllegalStateException("a raced request failed: " + e, e);
                  }
                },
                pool));
      }
      go.countDown();
      List<Response> out = new ArrayList<>();
      for (CompletableFuture<Response> a : answers) {
        out.add(a.get(o.timeout().toMillis() * 2, TimeUnit.MILLISECONDS));
      }
      return out;
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
      pool.shutdownNow();
    }
  }

  /** Retries until the operation has a final answer (in-progress answers are waited out). */
  private Response settle(Request request) throws Exception {
    long deadline = System.nanoTime() + o.timeout().toNanos();
    while (true) {
      Response r = send(request);
      Answer answer = profile.classify(r);
      boolean waitable = answer == Answer.IN_PROGRESS || answer == Answer.IN_PROGRESS_OR_MISMATCH;
      if (!waitable || System.nanoTime() > deadline) {
        return r;
      }
      if (answer == Answer.IN_PROGRESS) {
        conflicts.add(r);
      }
      Thread.sleep(250);
    }
  }

  /** For a report: an answer with the in-progress status that is not the profile's answer. */
  private String notInProgress(Response r) {
    return r.status() == profile.inProgressStatus()
        ? ": not an in-progress answer (" + profile.name() + ": " + profile.inProgressAnswer() + ")"
        : "";
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

  private String unique() {
    return "ck" + run + "x" + counter.incrementAndGet();
  }

  private List<Map.Entry<String, String>> freshKey() {
    return keyHeader(UUID.randomUUID().toString());
  }

  private List<Map.Entry<String, String>> keyHeader(String key) {
    return List.of(Map.entry(KEY, keyValue(key)));
  }

  /** The header value for a key, in the form the checks send ({@link #sfString}). */
  private String keyValue(String key) {
    return spelled(key, sfString);
  }

  private static String spelled(String key, boolean sfString) {
    return sfString ? "\"" + key + "\"" : key;
  }

  private Request request(
      String unique,
      List<Map.Entry<String, String>> keyHeaders,
      Map.Entry<String, String> auth,
      String bodyTemplate,
      String pathTemplate,
      List<Map.Entry<String, String>> extra) {
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    if (auth != null) {
      headers.add(auth);
    }
    headers.add(Map.entry("Content-Type", o.contentType()));
    headers.addAll(o.headers());
    headers.addAll(extra);
    headers.addAll(keyHeaders);
    return new Request(
        o.method(),
        resolve(fill(pathTemplate, unique)),
        headers,
        fill(bodyTemplate, unique).getBytes(StandardCharsets.UTF_8));
  }

  private URI resolve(String pathOrUrl) {
    return pathOrUrl.startsWith("http://") || pathOrUrl.startsWith("https://")
        ? URI.create(pathOrUrl)
        : URI.create(o.baseUrl() + pathOrUrl);
  }

  private static String fill(String template, String unique) {
    return template.replace("{{unique}}", unique);
  }

  private static String query(URI uri) {
    return uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
  }

  private Response send(Request request) throws IOException {
    return RawHttp.send(request, o.timeout());
  }

  /**
   * The effect count for {@code unique} as {@code auth} sees it, for a second opinion only: empty
   * when there is no effect URL or it gives no count with these credentials (an oracle may serve
   * the first principal alone), never an error.
   */
  private OptionalLong effectsAs(Map.Entry<String, String> auth, String unique) {
    if (o.effectUrl() == null) {
      return OptionalLong.empty();
    }
    try {
      Response r = send(effectRequest(auth, resolve(fill(o.effectUrl(), unique))));
      return r.success()
          ? OptionalLong.of(EffectCount.of(Json.parse(r.bodyText()), o.effectCount()))
          : OptionalLong.empty();
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /** A GET of the effect URL {@code url} with {@code auth} (none if null), asking for JSON. */
  private static Request effectRequest(Map.Entry<String, String> auth, URI url) {
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    if (auth != null) {
      headers.add(auth);
    }
    headers.add(Map.entry("Accept", "application/json"));
    return new Request("GET", url, headers, new byte[0]);
  }

  /**
   * The effect count for {@code unique}. The effect URL is the user's own oracle, not the endpoint
   * under test: anything but a count is a {@link ConfigurationError} that names it, never a verdict
   * about the endpoint.
   */
  private long effects(String unique) throws ConfigurationError {
    URI url = resolve(fill(o.effectUrl(), unique));
    Response r;
    try {
      r = send(effectRequest(o.auth(), url));
    } catch (IOException e) {
      throw new ConfigurationError("--effect-url " + url + " gave no answer: " + reason(e));
    }
    String answered = "--effect-url " + url + " answered " + r.summary();
    if (!r.success()) {
      throw new ConfigurationError(
          answered
              + "; it must answer 2xx with a count"
              + (r.status() == 401 || r.status() == 403
                  ? " (it is asked with --auth's "
                      + (o.auth() == null
                          ? "header, and none was given"
                          : o.auth().getKey() + " header")
                      + ")"
                  : ""));
    }
    Object document;
    try {
      document = Json.parse(r.bodyText());
    } catch (IllegalArgumentException e) {
      throw new ConfigurationError(answered + ", which is not JSON");
    }
    try {
      return EffectCount.of(document, o.effectCount());
    } catch (IllegalArgumentException e) {
      throw new ConfigurationError(
          answered
              + ": "
              + e.getMessage()
              + (o.effectCount().isEmpty()
                  ? "; say where its count is with --effect-count (e.g. count, data.length)"
                  : " (--effect-count " + o.effectCount() + ")"));
    }
  }

  private static String reason(IOException e) {
    if (e instanceof UnknownHostException) {
      return "unknown host " + e.getMessage();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** Empty when the effect count is as expected; else what was wrong. */
  private String effectNote(String unique, long expected) throws ConfigurationError {
    if (o.effectUrl() == null) {
      return "";
    }
    long n = effects(unique);
    return n == expected ? "" : n + " effects instead of " + expected;
  }

  private String countedNote() {
    return o.effectUrl() == null ? "" : " (effects counted)";
  }

  private static String effectSuffix(String effect) {
    return effect.isEmpty() ? "" : "; " + effect;
  }

  /** At most {@code n} chars of {@code text}, never half of a surrogate pair. */
  static String prefix(String text, int n) {
    int end = Math.min(n, text.length());
    if (end > 0 && end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(0, end);
  }

  private static String summary(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    return text.length() > 120 ? prefix(text, 120) + "…" : text;
  }

  private static String describe(List<Map.Entry<String, String>> headers) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, String> h : headers) {
      String v = h.getValue();
      String shown = v.length() > 40 ? prefix(v, 20) + "…(" + v.length() + " chars)" : v;
      StringBuilder printable = new StringBuilder();
      for (char c : shown.toCharArray()) {
        printable.append(
            c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
      }
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(h.getKey()).append(": ").append(printable);
    }
    return out.toString();
  }
}
