package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.client.internal.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client against the real payments service (a separate process, on PostgreSQL) through a proxy
 * that loses about 30% of the answers after the service executed the request: every operation is
 * retried with its one key until done, and each intended payment exists exactly once and was
 * charged at the provider exactly once.
 */
class RetryingClientIT {

  private static final int OPERATIONS = 500;
  private static final int THREADS = 16;

  private static PaymentsServiceProcess service;

  @TempDir Path dir;

  @BeforeAll
  static void startService() throws Exception {
    service = PaymentsServiceProcess.start();
  }

  @AfterAll
  static void stopService() {
    if (service != null) {
      service.close();
    }
  }

  static String payment(String merchantReference) {
    return """
        {"accountId":"acc_1","amount":"10.00","currency":"EUR","merchantReference":"%s"}"""
        .formatted(merchantReference);
  }

  @Test
  void fiveHundredOperationsThroughLostAnswersMakeFiveHundredPayments() throws Exception {
    String run = "client-it-bulk-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    Duration requestTimeout = Duration.ofSeconds(1);
    try (FaultProxy proxy =
            FaultProxy.start(
                service.port(),
                FaultProxy.random(0.15, 0.15, 20240601L),
                requestTimeout.plusMillis(500));
        IdempotentClient client =
            IdempotentClient.builder()
                .baseUri(proxy.uri())
                .bearerToken(PaymentsServiceProcess.API_KEY)
                .requestTimeout(requestTimeout)
                .retryPolicy(
                    RetryPolicy.builder()
                        .maxAttempts(50)
                        .initialBackoff(Duration.ofMillis(50))
                        .maxBackoff(Duration.ofSeconds(1))
                        .deadline(Duration.ofMinutes(3))
                        .build())
                .journal(dir.resolve("bulk.journal"))
                .build()) {
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<IdempotentResponse>> futures = new ArrayList<>();
      for (int i = 0; i < OPERATIONS; i++) {
        String reference = run + i;
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  return client.post("/v1/payments").json(payment(reference)).send();
                }));
      }
      long start = System.nanoTime();
      go.countDown();
      List<IdempotentResponse> responses = new ArrayList<>();
      for (Future<IdempotentResponse> f : futures) {
        responses.add(f.get(5, TimeUnit.MINUTES));
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      pool.shutdown();

      int attempts = responses.stream().mapToInt(IdempotentResponse::attempts).sum();
      long replays = responses.stream().filter(IdempotentResponse::replayed).count();
      long retried = responses.stream().filter(r -> r.attempts() > 1).count();
      Set<String> paymentIds = new HashSet<>();
      Set<String> keys = new HashSet<>();
      for (IdempotentResponse r : responses) {
        assertThat(r.status()).as(r.bodyAsString()).isEqualTo(201);
        paymentIds.add(Json.string(r.bodyAsString(), "paymentId").orElseThrow());
        keys.add(r.key());
      }
      long payments = service.payments(run + "%");
      long charges = service.providerCharges(paymentIds);
      System.out.printf(
          "%n[client-it] %d operations on %d threads in %d ms: %d attempts (%d operations retried),"
              + " %d replayed answers; proxy: %d forwarded, %d passed, %d dropped, %d delayed;"
              + " payments in the database: %d; provider charges: %d%n%n",
          OPERATIONS,
          THREADS,
          millis,
          attempts,
          retried,
          replays,
          proxy.forwarded(),
          proxy.passed(),
          proxy.dropped(),
          proxy.delayed(),
          payments,
          charges);

      assertThat(payments).isEqualTo(OPERATIONS);
      assertThat(service.payments("client-it-%")).isEqualTo(OPERATIONS);
      assertThat(paymentIds).hasSize(OPERATIONS);
      // Each payment charged the provider exactly once (its own derived key downstream).
      assertThat(charges).isEqualTo(OPERATIONS);
      assertThat(keys).hasSize(OPERATIONS);
      // Answers of executed requests were lost, and the retries got them back as replays.
      assertThat(proxy.dropped()).isPositive();
      assertThat(proxy.delayed()).isPositive();
      assertThat(replays).isPositive();
      assertThat(attempts).isGreaterThan(OPERATIONS);
      // Every request the service saw carried one of the 500 keys: no key was made in a retry.
      assertThat(proxy.keys()).hasSize(proxy.forwarded());
      assertThat(new HashSet<>(proxy.keys())).isEqualTo(keys);
      assertThat(client.journal().pending()).isEmpty();
    }
  }

  @Test
  void aServerIssuedKeyWorksAgainstTheService() {
    String reference = "client-it-issued-" + UUID.randomUUID();
    try (IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(service.uri())
            .bearerToken(PaymentsServiceProcess.API_KEY)
            .build()) {
      IdempotentResponse r =
          client.post("/v1/payments").issuedKey("create_payment").json(payment(reference)).send();

      assertThat(r.status()).isEqualTo(201);
      assertThat(r.key()).startsWith("ik_");
      assertThat(service.payments(reference)).isEqualTo(1);
    }
  }

  @Test
  void theServicesRefusalsArriveTyped() {
    String reference = "client-it-typed-" + UUID.randomUUID();
    try (IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(service.uri())
            .bearerToken(PaymentsServiceProcess.API_KEY)
            .build()) {
      String key = "client-it-" + UUID.randomUUID();
      client.post("/v1/payments").key(key).json(payment(reference)).send();

      // The same key for a different payment: refused, never replayed.
      assertThatThrownBy(
              () ->
                  client
                      .post("/v1/payments")
                      .key(key)
                      .json(payment(reference).replace("10.00", "99.00"))
                      .send())
          .isInstanceOfSatisfying(
              KeyReusedException.class,
              e -> {
                assertThat(e.status()).hasValue(422);
                assertThat(e.errorCode()).hasValue(KeyReusedException.ERROR_CODE);
                assertThat(e.detail()).hasValueSatisfying(d -> assertThat(d).contains("new key"));
                assertThat(e.attempts()).isEqualTo(1);
              });
      // A bad body: 400, not retried.
      assertThatThrownBy(() -> client.post("/v1/payments").json("{\"amount\":\"x\"}").send())
          .isInstanceOfSatisfying(
              RequestRejectedException.class,
              e -> {
                assertThat(e.status()).hasValue(400);
                assertThat(e.attempts()).isEqualTo(1);
              });
    }
    try (IdempotentClient anonymous =
        IdempotentClient.builder().baseUri(service.uri()).bearerToken("sk_wrong").build()) {
      assertThatThrownBy(
              () -> anonymous.post("/v1/payments").json(payment(reference + "-x")).send())
          .isInstanceOfSatisfying(
              RequestRejectedException.class,
              e -> assertThat(e.errorCode()).hasValue("AUTHENTICATION_REQUIRED"));
    }
    assertThat(service.payments(reference + "%")).isEqualTo(1);
  }
}
