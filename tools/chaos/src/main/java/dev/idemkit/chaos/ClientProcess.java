package dev.idemkit.chaos;

import dev.idemkit.client.IdempotencyClientException;
import dev.idemkit.client.IdempotentClient;
import dev.idemkit.client.IdempotentResponse;
import dev.idemkit.client.RequestRejectedException;
import dev.idemkit.client.RetryPolicy;
import java.net.URI;
import java.net.http.HttpClient;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One client process: creates payments (70 %) and orders (30 %) one after the other, each with its
 * own key reused on every retry, and records what it was told in the {@link History}. A client
 * gives an operation 10 s: one that outlives a fault is recorded as {@code info} (unknown), and the
 * accounting finds out whether it was applied anyway (recovered). The operation id is the payment's
 * merchant reference or the order item's SKU, which is how the accounting finds its effects.
 *
 * <p>Each answer is recorded with its key and a {@link #digest} of its body; after the run, {@link
 * #askAgain} sends every operation that got a stored answer once more with the same key and body,
 * and records that answer too, under the process {@link #ASKED_AGAIN}: the accounting checks that
 * all of them are the same ({@code changed_answers}).
 */
final class ClientProcess {

  /** The clients' API key, which the cluster configures as its tenant's ({@link Cluster}). */
  static final String API_KEY = "sk_chaos_tenant";

  /**
   * The API key of client {@code process}: the run's tenants take turns ({@link Cluster#tenants}).
   */
  static String apiKey(ChaosRun.Config config, int process) {
    List<String> keys = List.copyOf(Cluster.tenants(config.database().equals("shards")).keySet());
    return keys.get(process % keys.size());
  }

  /** The history's process for the answers {@link #askAgain} gets. */
  static final String ASKED_AGAIN = "asked-again";

  /** A payment's request body. */
  record PaymentRequest(
      String accountId, String amount, String currency, String merchantReference) {}

  /** An order's request body: one item. */
  record OrderRequest(String currency, List<Item> items) {
    record Item(String sku, int quantity, String unitPrice) {}
  }

  private final int process;
  private final String tag;
  private final IdempotentClient client;
  private final History history;
  private final Random random;

  /** An operation answered with a stored answer: what to send again, and under which key. */
  private record Answered(String op, String f, String path, String json, String key) {}

  private final List<Answered> answered = new CopyOnWriteArrayList<>();

  ClientProcess(int process, String tag, int port, ChaosRun.Config config, History history) {
    this.process = process;
    this.tag = tag;
    this.history = history;
    this.random = new Random(config.seed() * 1000 + process);
    this.client =
        IdempotentClient.builder()
            .baseUri(URI.create("http://127.0.0.1:" + port))
            .bearerToken(apiKey(config, process))
            .httpClient(
                HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(1))
                    .build())
            .requestTimeout(config.requestTimeout())
            .retryPolicy(
                RetryPolicy.builder()
                    .maxAttempts(20)
                    .initialBackoff(Duration.ofMillis(50))
                    .maxBackoff(Duration.ofSeconds(2))
                    .deadline(Duration.ofSeconds(10))
                    .build())
            .build();
  }

  /** Runs operations one after the other until {@code deadline} (a {@link System#nanoTime()}). */
  void runUntil(long deadline) {
    for (int n = 1; System.nanoTime() < deadline; n++) {
      String op = "op-" + tag + "-" + process + "-" + n;
      boolean payment = random.nextInt(10) < 7;
      String amount = (1 + random.nextInt(99)) + ".00";
      if (payment) {
        attempt(
            op,
            "create-payment",
            amount,
            "/v1/payments",
            new PaymentRequest("acc_chaos", amount, "EUR", op),
            "paymentId");
      } else {
        attempt(
            op,
            "create-order",
            amount,
            "/v1/orders",
            new OrderRequest("EUR", List.of(new OrderRequest.Item(op, 1, amount))),
            "orderId");
      }
    }
  }

  /** One operation: its invoke, then what the client was told, or that it cannot tell. */
  private void attempt(
      String op, String f, String amount, String path, Object body, String idField) {
    history.add("invoke", process, f, History.value("op", op, "amount", amount));
    String json = Json.write(body);
    try {
      IdempotentResponse r = client.post(path).json(json).send();
      history.add(
          "ok",
          process,
          f,
          History.value(
              "op",
              op,
              "status",
              r.status(),
              "id",
              Json.read(r.bodyAsString()).path(idField).stringValue(null),
              "attempts",
              r.attempts(),
              "replayed",
              r.replayed(),
              "key",
              r.key(),
              "digest",
              digest(r.body())));
      answered.add(new Answered(op, f, path, json, r.key()));
    } catch (RequestRejectedException refused) {
      // A refusal of the credentials decided nothing about the operation, and an earlier attempt
      // may have run: its outcome is unknown, not a definite failure.
      int status = refused.status().orElse(0);
      boolean credentials = status == 401 || status == 403 || status == 407;
      history.add(
          credentials && refused.attempts() > 1 ? "info" : "fail",
          process,
          f,
          History.value(
              "op",
              op,
              "status",
              status,
              "error",
              refused.errorCode().orElse(""),
              "attempts",
              refused.attempts(),
              "key",
              refused.key().orElse(null),
              "digest",
              digest(refused.response().body())));
      if (status == STORED_REFUSAL && refused.key().isPresent()) {
        answered.add(new Answered(op, f, path, json, refused.key().get()));
      }
    } catch (IdempotencyClientException unknown) {
      history.add(
          "info",
          process,
          f,
          History.value(
              "op",
              op,
              "error",
              unknown.getClass().getSimpleName(),
              "attempts",
              unknown.attempts()));
    } catch (RuntimeException unknown) {
      history.add("info", process, f, History.value("op", op, "error", unknown.toString()));
    }
  }

  /**
   * Sends every operation that got a stored answer once more, with its key and body, and records
   * what the server answered under {@link #ASKED_AGAIN}: the contract's replay (the same status and
   * body bytes, with {@code Idempotent-Replayed: true}), unless the record changed.
   */
  void askAgain() {
    for (Answered a : answered) {
      try {
        IdempotentResponse r = client.post(a.path()).key(a.key()).json(a.json()).send();
        history.add("ok", ASKED_AGAIN, a.f(), answer(a, r.status(), r.replayed(), r.body()));
      } catch (RequestRejectedException refused) {
        history.add(
            "fail",
            ASKED_AGAIN,
            a.f(),
            answer(a, refused.status().orElse(0), false, refused.response().body()));
      } catch (RuntimeException unknown) {
        history.add(
            "info", ASKED_AGAIN, a.f(), History.value("op", a.op(), "error", unknown.toString()));
      }
    }
  }

  private static Map<String, Object> answer(Answered a, int status, boolean replayed, byte[] body) {
    return History.value(
        "op",
        a.op(),
        "status",
        status,
        "replayed",
        replayed,
        "key",
        a.key(),
        "digest",
        digest(body));
  }

  /**
   * The refusal the contract stores and replays that a client is told in the run: a decline (402).
   * Other refusals (credentials, quota) are answered once and not stored, so a second request may
   * rightly be answered differently.
   */
  static final int STORED_REFUSAL = 402;

  /**
   * What the answer stability check compares of a body: its SHA-256, in hex. A replay carries the
   * stored body bytes (docs/contract.md), so equal bytes, not equal JSON, are what is expected.
   */
  static String digest(byte[] body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
