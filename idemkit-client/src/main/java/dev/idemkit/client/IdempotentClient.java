package dev.idemkit.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * An HTTP client for non-idempotent operations ({@code POST}, {@code PATCH}) on an API that honours
 * {@code Idempotency-Key}: each intended operation gets its key <em>once</em>, before its first
 * attempt, and every retry sends that same key, so that a retry after a lost answer gets the first
 * answer instead of a second payment.
 *
 * <pre>{@code
 * IdempotentClient client =
 *     IdempotentClient.builder()
 *         .baseUri(URI.create("https://api.example.com"))
 *         .bearerToken(apiKey)
 *         .retryPolicy(RetryPolicy.builder().maxAttempts(8).deadline(Duration.ofSeconds(60)).build())
 *         .journal(Path.of("payments.journal"))
 *         .build();
 *
 * IdempotentResponse payment = client.post("/v1/payments").json(body).send();
 * }</pre>
 *
 * <p>The key is a random UUID by default, or the caller's ({@link IdempotentRequest#key(String)}),
 * or one the server issues ({@link IdempotentRequest#issuedKey(String)}). An attempt is retried
 * after an I/O error or timeout, a {@code 5xx}, {@code 408}, {@code 429}, and a {@code 409} whose
 * {@code errorCode} is {@code IDEMPOTENCY_REQUEST_IN_PROGRESS} or {@code
 * IDEMPOTENCY_OUTCOME_PENDING}; never after any other {@code 4xx}. Waits follow the {@link
 * RetryPolicy} and the server's {@code Retry-After}. See {@link IdempotencyClientException} for the
 * failures and {@link Journal} for surviving a crash of the calling process.
 *
 * <p>Thread-safe: build one client and share it. {@link #close()} releases the journal.
 */
public interface IdempotentClient extends AutoCloseable {

  /** The request header that carries the key. */
  String KEY_HEADER = "Idempotency-Key";

  /** {@code errorCode} of a {@code 409}: the first attempt is still running. Retried. */
  String REQUEST_IN_PROGRESS = "IDEMPOTENCY_REQUEST_IN_PROGRESS";

  /**
   * {@code errorCode} of a {@code 409}: a downstream outcome is being recovered, or awaits an
   * operator's resolution (automatic recovery gave up; the server then asks for a long {@code
   * Retry-After}, at least 60 s with Idemkit's server, so a retry policy whose deadline is shorter
   * ends with this answer rather than waiting for an operator). Retried after the server's delay.
   */
  String OUTCOME_PENDING = "IDEMPOTENCY_OUTCOME_PENDING";

  /**
   * Starts a client.
   *
   * @return a builder
   */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Describes a new {@code POST} operation; nothing is sent before {@link
   * IdempotentRequest#send()}.
   *
   * @param path the path (and query) appended to the base URI, starting with {@code /}
   * @return the operation, to complete and send
   */
  IdempotentRequest post(String path);

  /**
   * Describes a new {@code PATCH} operation.
   *
   * @param path the path (and query) appended to the base URI, starting with {@code /}
   * @return the operation, to complete and send
   */
  IdempotentRequest patch(String path);

  /**
   * Describes a new operation with any method.
   *
   * @param method the HTTP method, such as {@code PUT}
   * @param path the path (and query) appended to the base URI, starting with {@code /}
   * @return the operation, to complete and send
   */
  IdempotentRequest request(String method, String path);

  /**
   * Sends a journaled operation again, with its original key, body and headers, and retries it like
   * a new one; on a final answer the journal marks it done. Use it after a restart for each of
   * {@code journal().pending()}, or after a {@link RetriesExhaustedException}.
   *
   * @param operation a pending operation of this client's journal
   * @return the answer; {@link IdempotentResponse#replayed()} tells whether an earlier attempt had
   *     done the work
   * @throws IllegalArgumentException if the operation is not pending in this client's journal
   * @throws IdempotencyClientException as {@link IdempotentRequest#send()}
   */
  IdempotentResponse resume(PendingOperation operation);

  /**
   * Asks the server for a key for one operation ({@code POST /v1/idempotency-keys} with {@code
   * {"operation": …}}, retried like any operation). {@link IdempotentRequest#issuedKey(String)}
   * does this for you.
   *
   * @param operation the server's operation name, such as {@code create_payment}
   * @return the issued key
   * @throws IdempotencyClientException if no key could be obtained
   */
  String issueKey(String operation);

  /**
   * The client's journal.
   *
   * @return the journal
   * @throws IllegalStateException if the client was built without {@link Builder#journal(Path)}
   */
  Journal journal();

  /** Closes the journal, if any. Operations still pending stay in its file. */
  @Override
  void close();

  /** Builds an {@link IdempotentClient}. Not thread-safe; the client it builds is. */
  final class Builder {
    URI baseUri;
    String bearerToken;
    RetryPolicy retryPolicy = RetryPolicy.defaults();
    Duration requestTimeout = Duration.ofSeconds(10);
    Duration connectTimeout = Duration.ofSeconds(5);
    Path journal;
    HttpClient httpClient;
    String keyIssuePath = "/v1/idempotency-keys";
    Sleeper sleeper = Sleeper.system();
    DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    Clock clock;

    private Builder() {}

    /**
     * The API's base URI; paths are appended to it. Required.
     *
     * @param baseUri an absolute {@code http} or {@code https} URI, such as {@code
     *     https://api.example.com}
     * @return this builder
     */
    public Builder baseUri(URI baseUri) {
      Objects.requireNonNull(baseUri, "baseUri");
      String scheme = baseUri.getScheme();
      if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
        throw new IllegalArgumentException("baseUri must be an http(s) URI, not " + baseUri);
      }
      if (baseUri.getQuery() != null || baseUri.getFragment() != null) {
        throw new IllegalArgumentException("baseUri must have no query or fragment: " + baseUri);
      }
      this.baseUri = baseUri;
      return this;
    }

    /**
     * Sends {@code Authorization: Bearer <token>} on every attempt. It is never written to the
     * journal.
     *
     * @param token the API key or token
     * @return this builder
     */
    public Builder bearerToken(String token) {
      this.bearerToken = Objects.requireNonNull(token, "token");
      return this;
    }

    /**
     * How often and how long to retry. Default {@link RetryPolicy#defaults()}.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * How long one attempt may wait for its whole answer (status, headers and body) before it
     * counts as failed and is retried. Default 10 s.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    /**
     * How long to wait for a connection. Default 5 s. Ignored with {@link #httpClient(HttpClient)}.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * Keeps a durable {@link Journal} of unfinished operations in this file, opened (and locked) by
     * {@link #build()}. Without one, an operation in flight when the process dies is forgotten.
     *
     * @param file the journal file; created if absent
     * @return this builder
     */
    public Builder journal(Path file) {
      this.journal = Objects.requireNonNull(file, "file");
      return this;
    }

    /**
     * The {@link HttpClient} to send with (proxy, TLS, executor, HTTP version). Default: a new one
     * with {@link #connectTimeout(Duration)} that follows no redirects.
     *
     * @param httpClient the client
     * @return this builder
     */
    public Builder httpClient(HttpClient httpClient) {
      this.httpClient = Objects.requireNonNull(httpClient, "httpClient");
      return this;
    }

    /**
     * Where {@link IdempotentClient#issueKey(String)} asks for keys. Default {@code
     * /v1/idempotency-keys}.
     *
     * @param path a path starting with {@code /}
     * @return this builder
     */
    public Builder keyIssuePath(String path) {
      this.keyIssuePath = DefaultIdempotentClient.requirePath(path);
      return this;
    }

    /**
     * How the client waits between attempts. Default {@link Sleeper#system()}; tests pass one that
     * records.
     *
     * @param sleeper the sleeper
     * @return this builder
     */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /**
     * The random source of the backoff's jitter: uniform draws in {@code [0, 1)}. Default {@link
     * ThreadLocalRandom}. Must be thread-safe if the client is shared.
     *
     * @param random the source
     * @return this builder
     */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * The clock the deadline is measured on. Default: a monotonic clock (wall-clock adjustments do
     * not move deadlines).
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the client, opening the journal if one was set.
     *
     * @return the client
     * @throws IllegalStateException if no base URI was set, or the journal is in use
     * @throws UncheckedIOException if the journal cannot be opened
     */
    public IdempotentClient build() {
      if (baseUri == null) {
        throw new IllegalStateException("baseUri is required, e.g. https://api.example.com");
      }
      Journal opened = null;
      if (journal != null) {
        try {
          opened = Journal.open(journal);
        } catch (IOException e) {
          throw new UncheckedIOException("could not open the journal " + journal, e);
        }
      }
      return new DefaultIdempotentClient(this, opened);
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(name + " must be positive, not " + d);
      }
      return d;
    }
  }
}
