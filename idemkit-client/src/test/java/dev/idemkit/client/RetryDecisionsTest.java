package dev.idemkit.client;

import static dev.idemkit.client.ScriptedServer.Reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which answers are retried and which are final, against a scripted server that records every
 * attempt: every attempt of one operation carries the same key.
 */
class RetryDecisionsTest {

  private static final String PATH = "/v1/payments";
  private static final String BODY = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";

  private final ScriptedServer server = ScriptedServer.start();

  @AfterEach
  void stop() {
    server.close();
  }

  private IdempotentClient.Builder client() {
    return IdempotentClient.builder()
        .baseUri(server.uri())
        .bearerToken("sk_test")
        .requestTimeout(Duration.ofSeconds(5))
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).build())
        .sleeper(d -> {});
  }

  static Stream<Arguments> retried() {
    return Stream.of(
        Arguments.of("500", Reply.problem(500, "INTERNAL_ERROR", "boom")),
        Arguments.of("502", Reply.of(502)),
        Arguments.of("503", Reply.of(503).header("Retry-After", "0")),
        Arguments.of("504", Reply.of(504)),
        Arguments.of("408", Reply.of(408)),
        Arguments.of(
            "429", Reply.problem(429, "RATE_LIMITED", "slow down").header("Retry-After", "0")),
        Arguments.of(
            "409 in progress",
            Reply.problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "running")
                .header("Retry-After", "0")),
        Arguments.of(
            "409 outcome pending",
            Reply.problem(409, "IDEMPOTENCY_OUTCOME_PENDING", "recovering")
                .header("Retry-After", "0")));
  }

  @ParameterizedTest(name = "{0} is retried with the same key")
  @MethodSource("retried")
  void retriedWithTheSameKey(String name, Reply failure) {
    server.on(PATH, failure, failure, Reply.created("{\"paymentId\":\"p1\"}"));

    IdempotentResponse r = client().build().post(PATH).json(BODY).send();

    assertThat(r.status()).isEqualTo(201);
    assertThat(r.attempts()).isEqualTo(3);
    assertThat(r.replayed()).isFalse();
    List<ScriptedServer.Attempt> attempts = server.attempts(PATH);
    assertThat(attempts).hasSize(3);
    assertThat(attempts).extracting(ScriptedServer.Attempt::key).containsOnly(r.key());
    assertThat(attempts).extracting(ScriptedServer.Attempt::body).containsOnly(BODY);
    assertThat(attempts)
        .extracting(ScriptedServer.Attempt::authorization)
        .containsOnly("Bearer sk_test");
    assertThat(attempts)
        .extracting(ScriptedServer.Attempt::contentType)
        .containsOnly("application/json");
  }

  static Stream<Arguments> final4xx() {
    return Stream.of(
        Arguments.of(Reply.problem(400, "IDEMPOTENCY_KEY_INVALID", "bad key")),
        Arguments.of(Reply.problem(400, "VALIDATION_FAILED", "amount is required")),
        Arguments.of(Reply.problem(401, "AUTHENTICATION_REQUIRED", "Send Authorization")),
        Arguments.of(Reply.problem(403, "FORBIDDEN", "not yours")),
        Arguments.of(Reply.problem(404, "ORDER_NOT_FOUND", "No order")),
        Arguments.of(Reply.problem(413, "PAYLOAD_TOO_LARGE", "too big")),
        Arguments.of(Reply.problem(422, "AMOUNT_MISMATCH", "wrong amount")),
        Arguments.of(Reply.problem(409, "PAYMENT_ALREADY_EXISTS", "Fetch it instead")));
  }

  @ParameterizedTest(name = "{0} is final")
  @MethodSource("final4xx")
  void otherClientErrorsAreNeverRetried(Reply refusal) {
    server.on(PATH, refusal, Reply.created("{}"));

    assertThatThrownBy(() -> client().build().post(PATH).json(BODY).send())
        .isExactlyInstanceOf(RequestRejectedException.class)
        .isInstanceOfSatisfying(
            RequestRejectedException.class,
            e -> {
              assertThat(e.status()).hasValue(refusal.status());
              assertThat(e.errorCode()).isPresent();
              assertThat(refusal.body()).contains(e.errorCode().get(), e.detail().get());
              assertThat(e.attempts()).isEqualTo(1);
              assertThat(e.response().status()).isEqualTo(refusal.status());
              assertThat(e.getMessage()).contains("not retried");
            });
    assertThat(server.attempts(PATH)).hasSize(1);
  }

  @Test
  void aKeyReusedForAnotherRequestIsItsOwnException() {
    server.on(
        PATH,
        Reply.problem(
            422,
            "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST",
            "Use a new key for a new operation."));

    assertThatThrownBy(() -> client().build().post(PATH).key("order-7").json(BODY).send())
        .isInstanceOfSatisfying(
            KeyReusedException.class,
            e -> {
              assertThat(e.status()).hasValue(422);
              assertThat(e.errorCode()).hasValue(KeyReusedException.ERROR_CODE);
              assertThat(e.detail()).hasValue("Use a new key for a new operation.");
              assertThat(e.key()).hasValue("order-7");
            });
    assertThat(server.attempts(PATH)).hasSize(1);
  }

  @Test
  void aTimeoutIsRetriedWithTheSameKey() {
    server.on(
        PATH, Reply.created("{\"late\":true}").delayed(Duration.ofSeconds(2)), Reply.created("{}"));

    IdempotentResponse r =
        client().requestTimeout(Duration.ofMillis(300)).build().post(PATH).json(BODY).send();

    assertThat(r.attempts()).isEqualTo(2);
    assertThat(r.bodyAsString()).isEqualTo("{}");
    assertThat(server.keys(PATH)).containsExactly(r.key(), r.key());
  }

  @Test
  void aConnectFailureIsRetriedWithTheSameKey() throws IOException {
    int port;
    try (ServerSocket reserved = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = reserved.getLocalPort();
    }
    AtomicReference<ScriptedServer> late = new AtomicReference<>();
    try (IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(URI.create("http://127.0.0.1:" + port))
            .sleeper(
                d -> {
                  // The server comes up while the client waits after "connection refused".
                  if (late.get() == null) {
                    late.set(ScriptedServer.startOn(port).on(PATH, Reply.created("{}")));
                  }
                })
            .build()) {
      IdempotentResponse r = client.post(PATH).json(BODY).send();

      assertThat(r.attempts()).isEqualTo(2);
      assertThat(late.get().keys(PATH)).containsExactly(r.key());
    } finally {
      if (late.get() != null) {
        late.get().close();
      }
    }
  }

  @Test
  void transportFailuresEndAsRetriesExhaustedWithTheCause() throws IOException {
    int port;
    try (ServerSocket reserved = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = reserved.getLocalPort();
    }
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(URI.create("http://127.0.0.1:" + port))
            .retryPolicy(RetryPolicy.builder().maxAttempts(3).build())
            .sleeper(d -> {})
            .build();

    assertThatThrownBy(() -> client.post(PATH).json(BODY).send())
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.status()).isEmpty();
              assertThat(e.errorCode()).isEmpty();
              assertThat(e.getCause()).isInstanceOf(ConnectException.class);
              assertThat(e.lastResponse()).isEmpty();
              assertThat(e.getMessage()).contains("outcome is unknown", "never a new one");
            });
  }

  @Test
  void aTimeoutAsTheLastFailureIsTheCause() {
    server.on(PATH, Reply.created("{}").delayed(Duration.ofSeconds(1)));
    assertThatThrownBy(
            () ->
                client()
                    .requestTimeout(Duration.ofMillis(200))
                    .retryPolicy(RetryPolicy.builder().maxAttempts(2).build())
                    .build()
                    .post(PATH)
                    .json(BODY)
                    .send())
        .isInstanceOf(RetriesExhaustedException.class)
        .hasCauseInstanceOf(HttpTimeoutException.class);
  }

  @Test
  void aReplayedAnswerSaysSo() {
    server.on(
        PATH,
        Reply.of(502),
        Reply.created("{\"paymentId\":\"p1\"}").header("Idempotent-Replayed", "true"));

    IdempotentResponse r = client().build().post(PATH).json(BODY).send();

    assertThat(r.replayed()).isTrue();
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(r.header("idempotent-replayed")).hasValue("true");
  }

  @Test
  void theCallersKeyIsUsedOnEveryAttempt() {
    server.on(PATH, Reply.of(503), Reply.of(500), Reply.created("{}"));

    IdempotentResponse r = client().build().post(PATH).key("order-42-payment").json(BODY).send();

    assertThat(r.key()).isEqualTo("order-42-payment");
    assertThat(server.keys(PATH))
        .containsExactly("order-42-payment", "order-42-payment", "order-42-payment");
  }

  @Test
  void aServerIssuedKeyIsFetchedOnceAndUsedOnEveryAttempt() {
    server.on(
        "/v1/idempotency-keys",
        Reply.of(503),
        Reply.json(
            201,
            "{\"key\":\"ik_v1.abc.def\",\"operation\":\"create_payment\",\"expiresAt\":\"2030-01-02T00:00:00Z\"}"));
    server.on(PATH, Reply.of(503), Reply.created("{}"));

    IdempotentResponse r =
        client().build().post(PATH).issuedKey("create_payment").json(BODY).send();

    assertThat(r.key()).isEqualTo("ik_v1.abc.def");
    assertThat(server.keys(PATH)).containsExactly("ik_v1.abc.def", "ik_v1.abc.def");
    List<ScriptedServer.Attempt> issue = server.attempts("/v1/idempotency-keys");
    assertThat(issue).hasSize(2);
    assertThat(issue).extracting(ScriptedServer.Attempt::key).containsOnlyNulls();
    assertThat(issue)
        .extracting(ScriptedServer.Attempt::body)
        .containsOnly("{\"operation\":\"create_payment\"}");
  }

  @Test
  void eachOperationHasItsOwnKeyAndIsSentOnce() {
    server.on(PATH, Reply.created("{}"));
    IdempotentClient client = client().build();

    IdempotentRequest first = client.post(PATH).json(BODY);
    IdempotentResponse a = first.send();
    IdempotentResponse b = client.post(PATH).json(BODY).send();

    assertThat(a.key()).isNotEqualTo(b.key());
    assertThatThrownBy(first::send).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> client.post(PATH).key("a").issuedKey("x"))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> client.post(PATH).header("Idempotency-Key", "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> client.post(PATH).header("Host", "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> client.post("v1/payments"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aBaseUriWithAPathKeepsIt() {
    server.on("/api/v1/payments", Reply.created("{}"));
    IdempotentClient client =
        IdempotentClient.builder().baseUri(URI.create(server.uri() + "/api/")).build();

    assertThat(client.post(PATH).json(BODY).send().status()).isEqualTo(201);
  }

  /** A key the server issues: asked for with the operation's name, read from the answer's key. */
  @Test
  void anIssuedKeyIsAskedForWithTheOperationAndReadFromTheAnswer() {
    server.on("/v1/idempotency-keys", Reply.created("{\"expiresAt\":\"x\",\"key\":\"ik_abc123\"}"));

    String key = client().build().issueKey("refund \"42\"");

    assertThat(key).isEqualTo("ik_abc123");
    ScriptedServer.Attempt asked = server.attempts("/v1/idempotency-keys").get(0);
    assertThat(asked.body()).isEqualTo("{\"operation\":\"refund \\\"42\\\"\"}");
    assertThat(asked.contentType()).isEqualTo("application/json");
  }
}
