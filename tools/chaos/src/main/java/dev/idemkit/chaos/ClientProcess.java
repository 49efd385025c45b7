package dev.idemkit.chaos;

import dev.idemkit.client.IdempotencyClientException;
import dev.idemkit.client.IdempotentClient;
import dev.idemkit.client.IdempotentResponse;
import dev.idemkit.client.RequestRejectedException;
import dev.idemkit.client.RetryPolicy;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * One client process: creates payments (70 %) and orders (30 %) one after the other, each with its
 * own key reused on every retry, and records what it was told in the {@link History}. A client
 * gives an operation 10 s: one that outlives a fault is recorded as {@code info} (unknown), and the
 * accounting finds out whether it was applied anyway (recovered). The operation id is the payment's
 * merchant reference or the order item's SKU, which is how the accounting finds its effects.
 */
final class ClientProcess {

  /** The clients' API key, which the cluster configures as its tenant's ({@link Cluster}). */
  static final String API_KEY = "sk_chaos_tenant";

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

  ClientProcess(int process, String tag, int port, ChaosRun.Config config, History history) {
    this.process = process;
    this.tag = tag;
    this.history = history;
    this.random = new Random(config.seed() * 1000 + process);
    this.client =
        IdempotentClient.builder()
            .baseUri(URI.create("http://127.0.0.1:" + port))
            .bearerToken(API_KEY)
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
    try {
      IdempotentResponse r = client.post(path).json(Json.write(body)).send();
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
              r.replayed()));
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
              refused.attempts()));
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
}
