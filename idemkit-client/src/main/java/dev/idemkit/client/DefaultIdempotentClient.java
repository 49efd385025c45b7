package dev.idemkit.client;

import dev.idemkit.client.internal.Json;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.DoubleSupplier;

/** The {@link IdempotentClient}: immutable after construction, so thread-safe. */
final class DefaultIdempotentClient implements IdempotentClient {

  private static final System.Logger LOG = System.getLogger(IdempotentClient.class.getName());

  private final HttpClient http;
  private final String base;
  private final String bearerToken;
  private final RetryPolicy policy;
  private final Duration requestTimeout;
  private final Journal journal;
  private final String keyIssuePath;
  private final Sleeper sleeper;
  private final DoubleSupplier random;
  private final Clock clock;

  DefaultIdempotentClient(IdempotentClient.Builder b, Journal journal) {
    this.http =
        b.httpClient != null
            ? b.httpClient
            : HttpClient.newBuilder()
                .connectTimeout(b.connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    String uri = b.baseUri.toString();
    this.base = uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    this.bearerToken = b.bearerToken;
    this.policy = b.retryPolicy;
    this.requestTimeout = b.requestTimeout;
    this.journal = journal;
    this.keyIssuePath = b.keyIssuePath;
    this.sleeper = b.sleeper;
    this.random = b.random;
    this.clock = b.clock != null ? b.clock : new MonotonicClock();
  }

  @Override
  public IdempotentRequest post(String path) {
    return request("POST", path);
  }

  @Override
  public IdempotentRequest patch(String path) {
    return request("PATCH", path);
  }

  @Override
  public IdempotentRequest request(String method, String path) {
    if (method == null || method.isEmpty() || !method.chars().allMatch(Character::isLetter)) {
      throw new IllegalArgumentException("not an HTTP method: " + method);
    }
    return new IdempotentRequest(this, method, requirePath(path));
  }

  @Override
  public IdempotentResponse resume(PendingOperation operation) {
    if (journal == null || !journal.isPending(operation.operationId())) {
      throw new IllegalArgumentException(
          operation + " is not pending in this client's journal; nothing to resume");
    }
    return run(operation, false);
  }

  @Override
  public String issueKey(String operation) {
    byte[] body = Json.object(Map.of("operation", operation)).getBytes(StandardCharsets.UTF_8);
    IdempotentResponse issued =
        sendWithRetries(
            null, "POST", keyIssuePath, body, Map.of("Content-Type", "application/json"));
    String key =
        Json.string(issued.bodyAsString(), "key")
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "the server answered "
                            + issued.status()
                            + " to "
                            + keyIssuePath
                            + " without a \"key\" field; check keyIssuePath"));
    return Keys.requireValid(key);
  }

  @Override
  public Journal journal() {
    if (journal == null) {
      throw new IllegalStateException(
          "this client has no journal; build it with IdempotentClient.builder().journal(path)");
    }
    return journal;
  }

  @Override
  public void close() {
    if (journal != null) {
      journal.close();
    }
  }

  /**
   * Runs one operation to a final answer or to giving up. The journal's START is on disk before the
   * first attempt; DONE follows a final answer (success or a refusal retrying cannot change), never
   * a give-up or a refusal of the credentials, which leave the operation pending for {@link
   * #resume}.
   */
  IdempotentResponse run(PendingOperation op, boolean isNew) {
    if (journal != null && isNew) {
      journal.start(op);
    }
    try {
      IdempotentResponse response =
          sendWithRetries(op.key(), op.method(), op.path(), op.bodyBytes(), op.headers());
      markDone(op);
      return response;
    } catch (RequestRejectedException rejected) {
      if (!RequestRejectedException.credentialsRefused(rejected.response().status())) {
        markDone(op);
      }
      throw rejected;
    }
  }

  private void markDone(PendingOperation op) {
    if (journal != null) {
      journal.done(op.operationId());
    }
  }

  /**
   * Sends until an answer is final or the policy gives up. {@code key} is fixed for the whole loop
   * ({@code null} only for issuing a key): this loop never makes a new one.
   */
  private IdempotentResponse sendWithRetries(
      String key, String method, String path, byte[] body, Map<String, String> headers) {
    URI uri = URI.create(base + path);
    Instant deadline = clock.instant().plus(policy.deadline());
    int attempts = 0;
    Failure failure = null;
    while (true) {
      Duration left = Duration.between(clock.instant(), deadline);
      if (failure != null && (left.isZero() || left.isNegative())) {
        // The wait overran the deadline.
        throw exhausted(
            key, method, path, attempts, failure, RetriesExhaustedException.Reason.DEADLINE);
      }
      Duration timeout = left.compareTo(requestTimeout) < 0 ? left : requestTimeout;
      attempts++;
      try {
        HttpResponse<byte[]> r =
            await(
                http.sendAsync(
                    request(uri, method, body, headers, key, timeout),
                    HttpResponse.BodyHandlers.ofByteArray()),
                timeout);
        IdempotentResponse answer =
            new IdempotentResponse(r.statusCode(), r.headers(), r.body(), key, attempts);
        if (r.statusCode() < 400) {
          if (attempts > 1) {
            LOG.log(Level.DEBUG, () -> label(key, method, path) + ": " + answer);
          }
          return answer;
        }
        failure = Failure.of(answer, clock.instant());
        if (!failure.retryable()) {
          throw failure.rejection();
        }
      } catch (IOException e) {
        failure = Failure.of(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new OperationInterruptedException(key, attempts, e);
      }
      if (attempts >= policy.maxAttempts()) {
        throw exhausted(
            key, method, path, attempts, failure, RetriesExhaustedException.Reason.MAX_ATTEMPTS);
      }
      Duration wait = policy.waitBefore(attempts, failure.retryAfter, random.getAsDouble());
      if (wait.compareTo(Duration.between(clock.instant(), deadline)) >= 0) {
        throw exhausted(
            key, method, path, attempts, failure, RetriesExhaustedException.Reason.DEADLINE);
      }
      int attempt = attempts;
      Failure last = failure;
      LOG.log(
          Level.DEBUG,
          () ->
              label(key, method, path)
                  + ": attempt "
                  + attempt
                  + " failed ("
                  + last
                  + "); retrying with the same key in "
                  + wait.toMillis()
                  + " ms");
      try {
        sleeper.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new OperationInterruptedException(key, attempts, e);
      }
    }
  }

  /**
   * Waits for a whole answer, body included, for at most {@code timeout}. {@link
   * HttpRequest#timeout} alone stops counting once the answer's headers arrived, so a body that
   * stalls after them would hang the caller past every deadline; here it is a timed-out attempt,
   * retried like any other.
   */
  private static HttpResponse<byte[]> await(
      CompletableFuture<HttpResponse<byte[]>> answer, Duration timeout)
      throws IOException, InterruptedException {
    try {
      return answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      answer.cancel(true);
      throw new HttpTimeoutException(
          "no complete answer within the request timeout of " + timeout.toMillis() + " ms");
    } catch (InterruptedException e) {
      answer.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IOException(cause);
    }
  }

  private HttpRequest request(
      URI uri,
      String method,
      byte[] body,
      Map<String, String> headers,
      String key,
      Duration timeout) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .method(
                method,
                body.length == 0
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body));
    headers.forEach(b::header);
    if (bearerToken != null) {
      b.header("Authorization", "Bearer " + bearerToken);
    }
    if (key != null) {
      b.header(KEY_HEADER, Keys.headerValue(key));
    }
    return b.build();
  }

  private RetriesExhaustedException exhausted(
      String key,
      String method,
      String path,
      int attempts,
      Failure last,
      RetriesExhaustedException.Reason reason) {
    String why =
        reason == RetriesExhaustedException.Reason.MAX_ATTEMPTS
            ? "after " + attempts + " attempt(s), the most the retry policy allows"
            : "after "
                + attempts
                + " attempt(s): the next one could not start within the deadline of "
                + policy.deadline().toSeconds()
                + " s"
                + (last.retryAfter.isPresent()
                    ? " (Retry-After " + last.retryAfter.get().toSeconds() + " s)"
                    : "");
    String advice =
        key == null
            ? "try again later"
            : journal != null
                ? "it stays pending in the journal; resume it later with the same key"
                : "retry later with the same key " + key + ", never a new one";
    return new RetriesExhaustedException(
        label(key, method, path)
            + ": gave up "
            + why
            + "; last: "
            + last
            + ". The outcome is unknown: "
            + advice
            + ".",
        last.cause,
        reason,
        key,
        attempts,
        last.answer,
        last.errorCode,
        last.detail);
  }

  private static String label(String key, String method, String path) {
    return method + " " + path + (key == null ? "" : " (key " + key + ")");
  }

  static String requirePath(String path) {
    if (path == null
        || !path.startsWith("/")
        || !path.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
      throw new IllegalArgumentException(
          "path must start with '/' and hold only visible ASCII (percent-encode the rest): "
              + path);
    }
    return path;
  }

  /**
   * Reads {@code Retry-After}: delay-seconds or an HTTP-date (RFC 9110 §10.2.3) in any of its three
   * forms (IMF-fixdate, and the obsolete RFC 850 and asctime forms a recipient must accept,
   * §5.6.7). A delay too large to hold is as good as for ever: it reaches past any deadline, so the
   * operation stops rather than retrying early. Anything else is ignored, as if absent.
   */
  static Optional<Duration> retryAfter(Optional<String> header, Instant now) {
    if (header.isEmpty()) {
      return Optional.empty();
    }
    String value = header.get().trim();
    if (!value.isEmpty() && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
      String digits = value.replaceFirst("^0+(?=.)", "");
      return Optional.of(
          digits.length() <= 18
              ? Duration.ofSeconds(Long.parseLong(digits))
              : Duration.ofSeconds(Long.MAX_VALUE));
    }
    try {
      return Optional.of(
          untilThen(
              now, ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant()));
    } catch (DateTimeParseException e) {
      // Not an IMF-fixdate: one of the obsolete forms, or nothing.
    }
    for (DateTimeFormatter form : obsoleteHttpDates(now)) {
      try {
        return Optional.of(
            untilThen(now, LocalDateTime.parse(value, form).toInstant(ZoneOffset.UTC)));
      } catch (DateTimeParseException e) {
        // Try the next form.
      }
    }
    return Optional.empty();
  }

  private static Duration untilThen(Instant now, Instant at) {
    Duration d = Duration.between(now, at);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * The obsolete HTTP-date forms, always GMT. An RFC 850 two-digit year more than 50 years ahead of
   * {@code now} is the latest past year with those digits (RFC 9110 §5.6.7).
   */
  private static List<DateTimeFormatter> obsoleteHttpDates(Instant now) {
    int year = now.atZone(ZoneOffset.UTC).getYear();
    DateTimeFormatter rfc850 =
        new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .appendPattern("EEEE, dd-MMM-")
            .appendValueReduced(ChronoField.YEAR, 2, 2, year - 49)
            .appendPattern(" HH:mm:ss 'GMT'")
            .toFormatter(Locale.US);
    DateTimeFormatter asctime =
        new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .appendPattern("EEE MMM ppd HH:mm:ss yyyy")
            .toFormatter(Locale.US);
    return List.of(rfc850, asctime);
  }

  /** Why one attempt did not end the operation. */
  private static final class Failure {
    final IdempotentResponse answer;
    final IOException cause;
    final int status;
    final String errorCode;
    final String detail;
    final Optional<Duration> retryAfter;

    private Failure(
        IdempotentResponse answer,
        IOException cause,
        String errorCode,
        String detail,
        Optional<Duration> retryAfter) {
      this.answer = answer;
      this.cause = cause;
      this.status = answer == null ? 0 : answer.status();
      this.errorCode = errorCode;
      this.detail = detail;
      this.retryAfter = retryAfter;
    }

    static Failure of(IOException e) {
      return new Failure(null, e, null, null, Optional.empty());
    }

    static Failure of(IdempotentResponse answer, Instant now) {
      String text =
          answer.header("Content-Type").orElse("").toLowerCase(Locale.ROOT).contains("json")
              ? answer.bodyAsString()
              : null;
      return new Failure(
          answer,
          null,
          Json.string(text, "errorCode").orElse(null),
          Json.string(text, "detail").orElse(null),
          retryAfter(answer.header("Retry-After"), now));
    }

    /** I/O errors, timeouts, 5xx, 408, 429, and the two 409s that mean "not decided yet". */
    boolean retryable() {
      if (answer == null) {
        return true;
      }
      if (status >= 500 || status == 408 || status == 429) {
        return true;
      }
      return status == 409
          && (REQUEST_IN_PROGRESS.equals(errorCode) || OUTCOME_PENDING.equals(errorCode));
    }

    RequestRejectedException rejection() {
      return KeyReusedException.ERROR_CODE.equals(errorCode)
          ? new KeyReusedException(answer, detail)
          : new RequestRejectedException(answer, errorCode, detail);
    }

    @Override
    public String toString() {
      if (answer == null) {
        return cause.getClass().getSimpleName()
            + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
      }
      return "HTTP " + status + (errorCode == null ? "" : " " + errorCode);
    }
  }

  /** Wall-clock time at start-up moved forward by {@link System#nanoTime()}: never jumps. */
  private static final class MonotonicClock extends Clock {
    private final Instant origin = Instant.now();
    private final long originNanos = System.nanoTime();

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException("a deadline clock has no zone");
    }

    @Override
    public Instant instant() {
      return origin.plusNanos(System.nanoTime() - originNanos);
    }
  }
}
