package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.CallResult;
import dev.idemkit.OperationResult;
import dev.idemkit.PhasedOperation;
import dev.idemkit.Step;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The replay policy per operation: an operation that names its replayed statuses has a decline
 * (402) stored and replayed for its window, while a transient conflict (409) is answered once and
 * not stored, so the retry runs again; an operation that names none follows {@code
 * idemkit.replayable-statuses}. A phased handler returns the operation it builds, and the client
 * gets the outcome's answer as a handler that answers itself would send it: the status, headers and
 * body its steps stored, the replay marker on a retry, and the layer's problem answers (a missing
 * key, an interrupted operation with {@code Retry-After}), never the operation serialized.
 */
@SpringBootTest(
    classes = ReplayPolicyIT.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReplayPolicyIT {

  static {
    FreshEmbeddedDataDir.use("replay-policy-pg");
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @LocalServerPort int port;
  @Autowired JdbcTemplate jdbc;

  @Configuration
  @EnableAutoConfiguration
  @Import(Handlers.class)
  static class App {
    @Bean
    IdempotencyTenantResolver tenants() {
      return request -> request.getHeader("X-Tenant");
    }
  }

  /** Counts calls in static fields: the bean is a proxy whose own fields are not the handler's. */
  @RestController
  static class Handlers {
    static final AtomicInteger reserveCalls = new AtomicInteger();
    static final AtomicInteger thrownCalls = new AtomicInteger();
    static final AtomicInteger declineCalls = new AtomicInteger();
    static final AtomicInteger defaultCalls = new AtomicInteger();
    static final AtomicInteger charges = new AtomicInteger();

    private final StoredResponses responses;

    Handlers(StoredResponses responses) {
      this.responses = responses;
    }

    /** The first call finds the seat held by someone else (a transient conflict). */
    @PostMapping("/reserve")
    @Idempotent(operation = "reserve_seat", replayedStatuses = 402)
    ResponseEntity<String> reserve(@RequestBody Map<String, Object> body) {
      return reserveCalls.incrementAndGet() == 1
          ? ResponseEntity.status(409).body("{\"error\":\"seat held, try again\"}")
          : ResponseEntity.status(201).body("{\"seat\":\"12A\"}");
    }

    @PostMapping("/reserve-thrown")
    @Idempotent(operation = "reserve_seat_thrown", replayedStatuses = 402)
    ResponseEntity<String> reserveThrown(@RequestBody Map<String, Object> body) {
      if (thrownCalls.incrementAndGet() == 1) {
        throw new ErrorResponseException(
            HttpStatus.CONFLICT, ProblemDetail.forStatus(HttpStatus.CONFLICT), null);
      }
      return ResponseEntity.status(201).body("{\"seat\":\"14C\"}");
    }

    @PostMapping("/pay")
    @Idempotent(operation = "pay", replayedStatuses = 402)
    ResponseEntity<String> pay(@RequestBody Map<String, Object> body) {
      declineCalls.incrementAndGet();
      return ResponseEntity.status(402).body("{\"error\":\"declined\"}");
    }

    @PostMapping("/reserve-default")
    @Idempotent(operation = "reserve_default")
    ResponseEntity<String> reserveDefault(@RequestBody Map<String, Object> body) {
      return defaultCalls.incrementAndGet() == 1
          ? ResponseEntity.status(409).body("{\"error\":\"seat held\"}")
          : ResponseEntity.status(201).body("{\"seat\":\"1A\"}");
    }

    /** Charges once, then answers 201 with the charge, or a 402 for an amount of 0. */
    @PostMapping("/charges/{account}")
    @Idempotent(operation = "charge", phased = true)
    PhasedOperation<Map<String, String>> charge(
        @PathVariable String account, @RequestBody Map<String, Object> body) {
      return PhasedOperation.builder()
          .external(
              "CHARGED",
              call ->
                  call.call(
                          (ctx, data) -> {
                            if (Integer.valueOf(0).equals(body.get("amount"))) {
                              return new CallResult.Rejected<>(
                                  responses.json(402, Map.of("error", "declined"), null));
                            }
                            if (Boolean.TRUE.equals(body.get("fail"))) {
                              return new CallResult.NotApplied<>("the provider is down");
                            }
                            return new CallResult.Applied<>(
                                Map.of("charge", "ch_" + charges.incrementAndGet()));
                          })
                      .farSideDeduplicatesByKey()
                      .afterCall((ctx, data) -> Step.next(data)))
          .complete(
              (ctx, data) ->
                  OperationResult.success(
                      responses.json(
                          201,
                          Map.of("account", account, "charge", data.get("charge")),
                          "/charges/" + data.get("charge"))));
    }
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return post(path, key, "{\"seat\":\"any\"}");
  }

  /** Without the key header when {@code key} is null. */
  private HttpResponse<String> post(String path, String key, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .header("X-Tenant", "t1")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private long records(String key) {
    return jdbc.queryForObject(
        "select count(*) from idemkit_record where idem_key = ?", Long.class, key);
  }

  @Test
  void aTransientConflictIsNotReplayedTheRetryRunsAgain() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = post("/reserve", key);
    assertThat(first.statusCode()).isEqualTo(409);
    assertThat(records(key)).as("nothing stored").isZero();
    HttpResponse<String> retry = post("/reserve", key);
    HttpResponse<String> again = post("/reserve", key);

    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(Handlers.reserveCalls).hasValue(2);
  }

  @Test
  void aThrownTransientConflictIsNotReplayedEither() throws Exception {
    String key = "k-" + UUID.randomUUID();

    assertThat(post("/reserve-thrown", key).statusCode()).isEqualTo(409);
    assertThat(records(key)).isZero();
    assertThat(post("/reserve-thrown", key).statusCode()).isEqualTo(201);
    assertThat(Handlers.thrownCalls).hasValue(2);
  }

  @Test
  void aDeclineIsReplayed() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = post("/pay", key);
    HttpResponse<String> retry = post("/pay", key);

    assertThat(first.statusCode()).isEqualTo(402);
    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(Handlers.declineCalls).hasValue(1);
  }

  @Test
  void anOperationWithoutAPolicyFollowsTheServiceWideStatuses() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = post("/reserve-default", key);
    HttpResponse<String> retry = post("/reserve-default", key);

    assertThat(first.statusCode()).isEqualTo(409);
    assertThat(retry.statusCode()).as("409 is in idemkit.replayable-statuses").isEqualTo(409);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(Handlers.defaultCalls).hasValue(1);
  }

  @Test
  void theOutcomeIsAnsweredAndReplayed() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = post("/charges/acc_1", key, "{\"amount\":5}");
    HttpResponse<String> retry = post("/charges/acc_1", key, "{\"amount\":5}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
    assertThat(first.headers().firstValue("Location"))
        .hasValueSatisfying(l -> assertThat(l).startsWith("/charges/ch_"));
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(first.body()).contains("\"account\":\"acc_1\"").contains("\"charge\":\"ch_");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(records(key)).isOne();
  }

  @Test
  void aRejectionIsStoredAndReplayed() throws Exception {
    String key = "k-" + UUID.randomUUID();
    post("/charges/acc_1", key, "{\"amount\":0}");

    HttpResponse<String> retry = post("/charges/acc_1", key, "{\"amount\":0}");

    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.body()).isEqualTo("{\"error\":\"declined\"}");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
  }

  @Test
  void theLayersProblemsAreAnswered() throws Exception {
    HttpResponse<String> missing = post("/charges/acc_1", null, "{\"amount\":5}");
    HttpResponse<String> interrupted =
        post("/charges/acc_1", "k-" + UUID.randomUUID(), "{\"amount\":5,\"fail\":true}");

    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(missing.body()).contains("IDEMPOTENCY_KEY_MISSING");
    assertThat(interrupted.statusCode()).isEqualTo(503);
    assertThat(interrupted.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(interrupted.body()).contains("OPERATION_INTERRUPTED");
  }
}
