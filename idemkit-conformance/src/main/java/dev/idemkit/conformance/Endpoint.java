package dev.idemkit.conformance;

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
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The endpoint under test as the checks speak to it: requests built from the options' templates
 * with a fresh {@code {{unique}}} and key, sent on the checker's own sockets; the effect URL's
 * count; and what a client does after a failure or an in-progress answer ({@link #settle}).
 */
final class Endpoint {

  /** At most this many retries of one request while it has not settled. */
  private static final int MAX_RETRIES = 40;

  /** The longest pause between two of them, whatever Retry-After says. */
  private static final long MAX_PAUSE_MILLIS = 1000;

  final Options o;
  final Profile profile;
  private final String run = Long.toString(System.currentTimeMillis(), 36);
  private final AtomicInteger counter = new AtomicInteger();

  /** Every in-progress answer the checks saw, for {@code conflict.retry-after}. */
  final List<Response> conflicts = new CopyOnWriteArrayList<>();

  /**
   * Whether keys go out as sf-strings ({@code "k"}) or bare ({@code k}): the profile's form, unless
   * the first request found that the API takes only the other one.
   */
  private boolean sfString;

  Endpoint(Options options) {
    this.o = options;
    this.profile = options == null ? Profile.IETF : options.profile();
    this.sfString = profile.sfString();
  }

  /** From now on, keys go out in the other form than the profile's. */
  void useOtherKeyForm() {
    sfString = !profile.sfString();
  }

  String keyHeaderName() {
    return profile.keyHeader();
  }

  String unique() {
    return "ck" + run + "x" + counter.incrementAndGet();
  }

  List<Map.Entry<String, String>> freshKey() {
    return keyHeader(UUID.randomUUID().toString());
  }

  List<Map.Entry<String, String>> keyHeader(String key) {
    return List.of(Map.entry(keyHeaderName(), keyValue(key)));
  }

  /** The header value for a key, in the form the checks send. */
  String keyValue(String key) {
    return spelled(key, sfString);
  }

  static String spelled(String key, boolean sfString) {
    return sfString ? "\"" + key + "\"" : key;
  }

  /** The ordinary request ({@code --body} to {@code --path} with {@code --auth}) under a key. */
  Request request(String unique, List<Map.Entry<String, String>> keyHeaders) {
    return request(unique, keyHeaders, o.auth(), o.body(), o.path(), List.of());
  }

  Request request(
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

  URI resolve(String pathOrUrl) {
    return pathOrUrl.startsWith("http://") || pathOrUrl.startsWith("https://")
        ? URI.create(pathOrUrl)
        : URI.create(o.baseUrl() + pathOrUrl);
  }

  static String fill(String template, String unique) {
    return template.replace("{{unique}}", unique);
  }

  Response send(Request request) throws IOException {
    return RawHttp.send(request, o.timeout());
  }

  /**
   * Whether a client that got this answer has no answer yet and retries: an in-progress answer (or
   * another with the profile's in-progress status, whatever its code, unless it is the profile's
   * mismatch answer), a server error, or a 429.
   */
  boolean unsettled(Response r) {
    return switch (profile.classify(r)) {
      case IN_PROGRESS, IN_PROGRESS_OR_MISMATCH -> true;
      case SUCCESS, MISMATCH -> false;
      case OTHER ->
          r.status() == profile.inProgressStatus() || r.status() >= 500 || r.status() == 429;
    };
  }

  /**
   * What a client does with an unsettled answer: retries the same request, after its Retry-After
   * (at most a second) or a quarter of a second, until the answer settles, for at most {@code
   * --timeout-s} and {@value #MAX_RETRIES} retries. A connection that breaks is retried too.
   * In-progress answers are kept for {@code conflict.retry-after}.
   *
   * @return the last answer, settled unless the bounds ran out
   */
  Response settle(Request request) throws Exception {
    long deadline = System.nanoTime() + o.timeout().toNanos();
    IOException broken = null;
    for (int retry = 0; retry < MAX_RETRIES; retry++) {
      Response r;
      try {
        r = send(request);
      } catch (IOException e) {
        broken = e;
        if (System.nanoTime() > deadline) {
          break;
        }
        Thread.sleep(250);
        continue;
      }
      if (!unsettled(r) || System.nanoTime() > deadline || retry == MAX_RETRIES - 1) {
        return r;
      }
      if (profile.classify(r) == Answer.IN_PROGRESS) {
        conflicts.add(r);
      }
      Thread.sleep(pause(r));
    }
    throw broken != null ? broken : new IOException("no answer to the retries");
  }

  private static long pause(Response r) {
    String after = r.header("Retry-After").orElse("").trim();
    if (after.matches("\\d{1,6}")) {
      return Math.min(Long.parseLong(after) * 1000, MAX_PAUSE_MILLIS);
    }
    return 250;
  }

  /**
   * A client's follow-up after a check saw a failure or an in-progress answer: it retries {@code
   * request} (the first request's, same key) until settled; the settled answer must be the first
   * request's answer ({@code first}, when that succeeded) and the key must have one effect, so a
   * late second run of the operation is found and reported as the duplicate it is.
   */
  void followUp(Request request, Response first, String unique, Findings findings)
      throws Exception {
    Response settled = settle(request);
    if (!settled.success()) {
      findings.violation(
          "the client's retries with the same key never got an answer: the last was "
              + settled.summary());
    } else if (first != null && first.success() && !Answers.same(first, settled)) {
      findings.violation(
          "the client's retry with the same key got "
              + settled.summary()
              + ", not the first request's answer"
              + (Answers.differOnlyInTimesOrIds(first.body(), settled.body())
                  ? " (the two differ only in timestamps or ids)"
                  : ""));
    }
    findings.effect(duplicateNote(unique));
  }

  /** Empty with one effect (or no effect URL); else the count, a duplicate or a lost effect. */
  String duplicateNote(String unique) throws ConfigurationError {
    if (o.effectUrl() == null) {
      return "";
    }
    long n = effects(unique);
    return n == 1
        ? ""
        : n > 1
            ? Answers.count(n, "effect") + " for one key: the operation ran again (a duplicate)"
            : "no effect: the operation was lost";
  }

  /**
   * Sends N copies of a request so that they reach the server together: each connection gets all
   * but the last byte of its request, then a latch releases the N last bytes at once.
   */
  List<Response> releaseTogether(Request request, int n) throws Exception {
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

  // ---------------------------------------------------------------- effects

  /**
   * The effect count for {@code unique} as {@code auth} sees it, for a second opinion only: empty
   * when there is no effect URL or it gives no count with these credentials (an oracle may serve
   * the first principal alone), never an error.
   */
  OptionalLong effectsAs(Map.Entry<String, String> auth, String unique) {
    if (o.effectUrl() == null) {
      return OptionalLong.empty();
    }
    try {
      Response r = send(effectRequest(auth, resolve(fill(o.effectUrl(), unique))));
      return r.success()
          ? OptionalLong.of(EffectCount.of(JsonDocuments.parse(r.bodyText()), o.effectCount()))
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
  long effects(String unique) throws ConfigurationError {
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
      document = JsonDocuments.parse(r.bodyText());
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

  /** Empty when the effect count is as expected (or there is no effect URL); else the count. */
  String effectNote(String unique, long expected) throws ConfigurationError {
    if (o.effectUrl() == null) {
      return "";
    }
    long n = effects(unique);
    return n == expected ? "" : Answers.count(n, "effect") + " instead of " + expected;
  }

  String countedNote() {
    return o.effectUrl() == null ? "" : " (effects counted)";
  }

  static String reason(IOException e) {
    if (e instanceof UnknownHostException) {
      return "unknown host " + e.getMessage();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
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
}
