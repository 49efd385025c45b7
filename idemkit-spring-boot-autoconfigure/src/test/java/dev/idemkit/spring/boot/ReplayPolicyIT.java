package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The replay policy per operation: an operation that names its replayed statuses has a decline
 * (402) stored and replayed for its window, while a transient conflict (409) is answered once and
 * not stored, so the retry runs again; an operation that names none follows {@code
 * idemkit.replayable-statuses}.
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
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .header("X-Tenant", "t1")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString("{\"seat\":\"any\"}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
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
}
