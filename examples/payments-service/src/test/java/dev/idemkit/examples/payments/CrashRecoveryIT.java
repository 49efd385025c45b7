package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.provider.Fault;
import dev.idemkit.examples.provider.ProviderSimulator;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * contract §5 (docs/contract.md) with real processes: the payments-service JVM is killed with
 * {@code kill -9} right after each phase, and another instance takes over; a paused owner (SIGSTOP
 * past its lease) wakes up after a takeover and can write nothing. The provider counts its own
 * charges.
 */
class CrashRecoveryIT {

  static ServiceProcesses env;
  static ServiceProcesses.Service survivor;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    env =
        new ServiceProcesses(
            ProviderSimulator.Config.defaults(0)
                .withProbabilities(Map.of(Fault.LATENCY, 1.0))
                .withLatency(Duration.ofMillis(800)));
    survivor = env.start("survivor");
  }

  @AfterAll
  static void stop() throws Exception {
    env.close();
  }

  private static HttpRequest payment(ServiceProcesses.Service to, String key, String ref) {
    return HttpRequest.newBuilder(to.uri("/v1/payments"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer sk_test_demo_a")
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .POST(
            HttpRequest.BodyPublishers.ofString(
                "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\""
                    + ref
                    + "\"}"))
        .build();
  }

  /** The client's retry loop: same key, honours Retry-After, until a final answer. */
  private static HttpResponse<String> retryUntilFinal(
      ServiceProcesses.Service to, String key, String ref) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      HttpResponse<String> r =
          HTTP.send(payment(to, key, ref), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 409 && r.statusCode() != 503) {
        return r;
      }
      assertThat(System.nanoTime()).as("no final answer in 60 s: " + r.body()).isLessThan(deadline);
      Thread.sleep(
          Math.min(
              1000, 1000L * Integer.parseInt(r.headers().firstValue("Retry-After").orElse("1"))));
    }
  }

  private static String paymentId(HttpResponse<String> r) {
    int at = r.body().indexOf("\"paymentId\":\"") + 13;
    return r.body().substring(at, at + 36);
  }

  @ParameterizedTest(name = "killed {0}")
  @ValueSource(
      strings = {
        "after-local-payment",
        "after-request-sent",
        "after-provider-charged",
        "after-provider-confirmed"
      })
  void aKilledOwnerIsTakenOverAndThePaymentIsChargedOnce(String point) throws Exception {
    String key = "crash-" + UUID.randomUUID();
    String ref = "crash-" + point + "-" + key;
    ServiceProcesses.Service doomed =
        env.start("killed-" + point, "--payments.faults.kill-at=" + point);

    try {
      HttpResponse<String> none =
          HTTP.send(payment(doomed, key, ref), HttpResponse.BodyHandlers.ofString());
      throw new AssertionError("the process should have died, but answered " + none.statusCode());
    } catch (IOException expected) {
      // kill -9 mid-request: the client gets no answer
    }
    assertThat(doomed.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(doomed.process.exitValue()).isNotZero();

    HttpResponse<String> answer = retryUntilFinal(survivor, key, ref);

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201);
    assertThat(answer.body()).contains("\"status\":\"COMPLETED\"");
    String paymentId = paymentId(answer);
    assertThat(env.charged(paymentId)).isEqualTo(1);
    assertThat(env.paymentsFor(ref)).isEqualTo(1);
    assertThat(retryUntilFinal(survivor, key, ref).body()).isEqualTo(answer.body());
  }

  @Test
  void aZombieOwnerPausedPastItsLeaseCannotWriteAfterATakeover() throws Exception {
    String key = "zombie-" + UUID.randomUUID();
    String ref = "zombie-" + key;
    ServiceProcesses.Service zombie = env.start("zombie");

    CompletableFuture<HttpResponse<String>> zombieAnswer =
        HTTP.sendAsync(payment(zombie, key, ref), HttpResponse.BodyHandlers.ofString());
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!"PROVIDER_CONFIRMED"
        .equals(env.query("select pending_external from idemkit_record where idem_key = ?", key))) {
      assertThat(System.nanoTime())
          .as("the zombie never reached its provider call")
          .isLessThan(deadline);
      Thread.sleep(5);
    }
    zombie.signal("STOP"); // a GC pause or a partition, in the middle of its provider call
    Thread.sleep(4_000); // past its 3 s lease, in real time: the zombie's clock is the database's

    HttpResponse<String> taken = retryUntilFinal(survivor, key, ref);
    assertThat(taken.statusCode()).as(taken.body()).isEqualTo(201);
    String tokenAfterTakeover =
        env.query("select fencing_token::text from idemkit_record where idem_key = ?", key);

    zombie.signal("CONT");
    HttpResponse<String> late = zombieAnswer.get(30, TimeUnit.SECONDS);

    assertThat(late.statusCode()).as(late.body()).isEqualTo(409);
    assertThat(late.body()).contains("IDEMPOTENCY_REQUEST_IN_PROGRESS");
    assertThat(tokenAfterTakeover).isEqualTo("2");
    assertThat(env.query("select fencing_token::text from idemkit_record where idem_key = ?", key))
        .isEqualTo("2");
    assertThat(env.query("select state from idemkit_record where idem_key = ?", key))
        .isEqualTo("COMPLETED");
    assertThat(
            env.query(
                "select count(*)::text from idemkit_record_history where idem_key = ? and fencing_token = 1"
                    + " and id > (select min(id) from idemkit_record_history h where h.idem_key = ?"
                    + " and h.event like 'TAKEOVER%')",
                key, key))
        .as("no write of the zombie's token after the takeover")
        .isEqualTo("0");
    assertThat(env.charged(paymentId(taken))).isEqualTo(1);
    assertThat(env.paymentsFor(ref)).isEqualTo(1);
    assertThat(retryUntilFinal(survivor, key, ref).body()).isEqualTo(taken.body());
  }
}
