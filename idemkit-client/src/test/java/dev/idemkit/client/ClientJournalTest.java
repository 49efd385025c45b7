package dev.idemkit.client;

import static dev.idemkit.client.ScriptedServer.Reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client and its journal: the key is durable before the first attempt leaves. */
class ClientJournalTest {

  private static final String PATH = "/v1/payments";
  private static final String BODY = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";

  @TempDir Path dir;

  private final ScriptedServer server = ScriptedServer.start();

  @AfterEach
  void stop() {
    server.close();
  }

  private IdempotentClient client(int maxAttempts) {
    return IdempotentClient.builder()
        .baseUri(server.uri())
        .bearerToken("sk_secret_token")
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).build())
        .sleeper(d -> {})
        .journal(dir.resolve("client.journal"))
        .build();
  }

  @Test
  void theKeyIsOnDiskBeforeTheFirstAttemptArrives() {
    List<String> journalAtFirstAttempt = new CopyOnWriteArrayList<>();
    server
        .on(PATH, Reply.created("{}"))
        .onRequest(
            a -> {
              try {
                journalAtFirstAttempt.add(Files.readString(dir.resolve("client.journal")));
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });

    try (IdempotentClient client = client(3)) {
      IdempotentResponse r = client.post(PATH).json(BODY).send();

      assertThat(journalAtFirstAttempt.get(0))
          .startsWith("START ")
          .contains(" " + r.key() + " POST " + PATH);
      assertThat(client.journal().pending()).isEmpty();
    }
    assertThat(Files.exists(dir.resolve("client.journal"))).isTrue();
  }

  @Test
  void theTokenIsNeverJournaled() throws IOException {
    server.on(PATH, Reply.of(503));
    try (IdempotentClient client = client(1)) {
      assertThatThrownBy(() -> client.post(PATH).json(BODY).header("Api-Version", "2").send())
          .isInstanceOf(RetriesExhaustedException.class);
    }
    String journal = Files.readString(dir.resolve("client.journal"));
    assertThat(journal).doesNotContain("sk_secret_token");
    try (IdempotentClient client = client(1)) {
      assertThat(client.journal().pending().get(0).headers())
          .containsOnlyKeys("Content-Type", "Api-Version");
    }
  }

  @Test
  void anOperationWhoseRetriesRanOutIsResumedWithTheSameKeyAfterARestart() {
    server.on(PATH, Reply.of(503));
    String key;
    try (IdempotentClient client = client(2)) {
      RetriesExhaustedException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              RetriesExhaustedException.class, () -> client.post(PATH).json(BODY).send());
      key = e.key().orElseThrow();
      assertThat(e.getMessage()).contains("stays pending in the journal");
      assertThat(client.journal().pending()).extracting(PendingOperation::key).containsExactly(key);
    }

    server.on(PATH, Reply.created("{\"paymentId\":\"p1\"}").header("Idempotent-Replayed", "true"));
    try (IdempotentClient restarted = client(2)) {
      List<PendingOperation> pending = restarted.journal().pending();
      assertThat(pending).hasSize(1);
      assertThat(pending.get(0).key()).isEqualTo(key);
      assertThat(pending.get(0).bodyAsString()).isEqualTo(BODY);

      IdempotentResponse r = restarted.resume(pending.get(0));

      assertThat(r.status()).isEqualTo(201);
      assertThat(r.replayed()).isTrue();
      assertThat(r.key()).isEqualTo(key);
      assertThat(restarted.journal().pending()).isEmpty();
      assertThatThrownBy(() -> restarted.resume(pending.get(0)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not pending");
    }
    assertThat(server.keys(PATH)).hasSize(3).containsOnly(key);
    assertThat(server.attempts(PATH)).extracting(ScriptedServer.Attempt::body).containsOnly(BODY);
  }

  @Test
  void credentialsRefusedAfterALostAnswerLeaveTheOperationPendingForItsKey() {
    // The first attempt ran and its answer was lost; the API key was revoked before the retry.
    server.on(
        PATH,
        Reply.of(502),
        Reply.problem(
            401, "AUTHENTICATION_REQUIRED", "Send Authorization: Bearer <your API key>."));
    String key;
    try (IdempotentClient client = client(3)) {
      RequestRejectedException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              RequestRejectedException.class, () -> client.post(PATH).json(BODY).send());
      key = e.key().orElseThrow();
      assertThat(e.status()).hasValue(401);
      assertThat(e.attempts()).isEqualTo(2);
      assertThat(e.getMessage()).contains("same key", "outcome is unknown");
      assertThat(client.journal().pending()).extracting(PendingOperation::key).containsExactly(key);
    }

    // Credentials fixed: resuming gets the first attempt's answer, never a second payment.
    server.on(PATH, Reply.created("{\"paymentId\":\"p1\"}").header("Idempotent-Replayed", "true"));
    try (IdempotentClient restarted = client(3)) {
      IdempotentResponse r = restarted.resume(restarted.journal().pending().get(0));
      assertThat(r.replayed()).isTrue();
      assertThat(restarted.journal().pending()).isEmpty();
    }
    assertThat(server.keys(PATH)).hasSize(3).containsOnly(key);
  }

  @Test
  void aFinalRefusalFinishesTheOperation() {
    server.on(PATH, Reply.problem(400, "VALIDATION_FAILED", "amount is required"));
    try (IdempotentClient client = client(3)) {
      assertThatThrownBy(() -> client.post(PATH).json(BODY).send())
          .isInstanceOf(RequestRejectedException.class);
      assertThat(client.journal().pending()).isEmpty();
    }
  }

  @Test
  void anInterruptedOperationStaysPending() {
    server.on(PATH, Reply.of(503));
    try (IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(server.uri())
            .journal(dir.resolve("client.journal"))
            .sleeper(
                d -> {
                  throw new InterruptedException("shutting down");
                })
            .build()) {
      assertThatThrownBy(() -> client.post(PATH).json(BODY).send())
          .isInstanceOf(OperationInterruptedException.class)
          .hasMessageContaining("same key");
      assertThat(Thread.interrupted()).isTrue();
      assertThat(client.journal().pending()).hasSize(1);
    }
  }

  @Test
  void aJournalBelongsToOneClient() {
    try (IdempotentClient client = client(1)) {
      assertThatThrownBy(() -> client(1))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("in use");
      assertThat(client.journal().file()).isEqualTo(dir.resolve("client.journal").toAbsolutePath());
    }
  }

  @Test
  void withoutAJournalThereIsNone() {
    IdempotentClient client = IdempotentClient.builder().baseUri(server.uri()).build();
    assertThatThrownBy(client::journal).isInstanceOf(IllegalStateException.class);
    PendingOperation foreign =
        new PendingOperation("op", "key", "POST", PATH, new byte[0], Map.of());
    assertThatThrownBy(() -> client.resume(foreign)).isInstanceOf(IllegalArgumentException.class);
  }
}
