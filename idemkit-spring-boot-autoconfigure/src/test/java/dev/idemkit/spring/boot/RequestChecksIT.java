package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.testing.MutableClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The checks the layer makes before a claim, on the starter alone (no gate filter in front): each
 * refused request gets its 4xx problem, leaves no record and never reaches the handler.
 */
@SpringBootTest(
    classes = RequestChecksIT.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RequestChecksIT {

  static {
    FreshEmbeddedDataDir.use("request-checks-pg");
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @LocalServerPort int port;
  @Autowired JdbcTemplate jdbc;
  @Autowired IssuedKeys issuedKeys;
  @Autowired MutableClock issuedKeysClock;

  @Configuration
  @EnableAutoConfiguration
  @Import(Handlers.class)
  static class App {
    @Bean
    IdempotencyTenantResolver tenants() {
      return request -> request.getHeader("X-Tenant");
    }

    /** Issued keys on a clock the tests move: a key's validity ends without waiting. */
    @Bean
    MutableClock issuedKeysClock() {
      return MutableClock.startingNow();
    }

    @Bean
    IssuedKeys issuedKeys(MutableClock issuedKeysClock) {
      return new IssuedKeys(
          "a-test-secret-of-sufficient-length".getBytes(StandardCharsets.UTF_8),
          Duration.ofHours(1),
          Set.of("create_slow_thing"),
          issuedKeysClock);
    }
  }

  /** Counts calls in static fields: the bean is a proxy whose own fields are not the handler's. */
  @RestController
  static class Handlers {
    static final AtomicInteger things = new AtomicInteger();

    @PostMapping("/things")
    @Idempotent(operation = "create_thing")
    ResponseEntity<String> create(@RequestBody Map<String, Object> body) {
      things.incrementAndGet();
      return ResponseEntity.status(201).body("{\"thing\":" + things.get() + "}");
    }

    static final AtomicInteger slowThings = new AtomicInteger();
    static final CountDownLatch slowEntered = new CountDownLatch(1);
    static final CountDownLatch slowRelease = new CountDownLatch(1);

    /** Holds its transaction (the claim not committed) until released, or for at most 10 s. */
    @PostMapping("/slow-things")
    @Idempotent(operation = "create_slow_thing")
    ResponseEntity<String> createSlowly(@RequestBody Map<String, Object> body)
        throws InterruptedException {
      slowThings.incrementAndGet();
      slowEntered.countDown();
      slowRelease.await(10, TimeUnit.SECONDS);
      return ResponseEntity.status(201).body("{\"slowThing\":" + slowThings.get() + "}");
    }
  }

  @Test
  void twoApiVersionsAreRefusedNotFingerprintedAsEitherOne() throws Exception {
    int before = Handlers.things.get();
    String twoFields = "k-" + UUID.randomUUID();
    String aList = "k-" + UUID.randomUUID();

    HttpResponse<String> fields =
        send(
            thing(twoFields)
                .header("Api-Version", "2024-01-01")
                .header("Api-Version", "2025-06-01"));
    HttpResponse<String> list = send(thing(aList).header("Api-Version", "2024-01-01, 2025-06-01"));

    for (HttpResponse<String> r : java.util.List.of(fields, list)) {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
      assertThat(r.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
      assertThat(r.body()).contains("\"errorCode\":\"REQUEST_NOT_CANONICAL\"");
    }
    assertThat(records(twoFields)).isZero();
    assertThat(records(aList)).isZero();
    assertThat(Handlers.things).as("the handler never ran").hasValue(before);

    HttpResponse<String> one = send(thing(twoFields).header("Api-Version", "2025-06-01"));
    assertThat(one.statusCode()).as("the fixed request is a first request").isEqualTo(201);
    assertThat(records(twoFields)).isOne();
  }

  @Test
  void aRequestNobodyAuthenticatedIsA401WhateverItsKey() throws Exception {
    int before = Handlers.things.get();
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> malformed = send(anonymous().header("Idempotency-Key", "\"" + key));
    HttpResponse<String> twoKeys =
        send(anonymous().header("Idempotency-Key", key).header("Idempotency-Key", key + "-2"));
    HttpResponse<String> none = send(anonymous());

    for (HttpResponse<String> r : java.util.List.of(malformed, twoKeys, none)) {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(401);
      assertThat(r.body()).contains("\"errorCode\":\"AUTHENTICATION_REQUIRED\"");
    }
    assertThat(records(key)).isZero();
    assertThat(records("\"" + key)).isZero();
    assertThat(Handlers.things).as("the handler never ran").hasValue(before);
  }

  @Test
  void aMalformedKeyWithABodyThatCannotBeReadIsAnsweredForTheBody() throws Exception {
    int before = Handlers.things.get();
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> r =
        send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/things"))
                .header("Content-Type", "application/json")
                .header("X-Tenant", "t1")
                .header("Idempotency-Key", key + "\"")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":")));

    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).doesNotContain("IDEMPOTENCY_KEY_INVALID");
    assertThat(records(key)).isZero();
    assertThat(records(key + "\"")).isZero();
    assertThat(Handlers.things).hasValue(before);
  }

  @Test
  void anIssuedKeyThatExpiresWhileItsFirstRequestRunsIsNeverToldItWasUnused() throws Exception {
    // The first request runs with the key while it is valid; its claim, its work and its answer
    // are one transaction. The key expires meanwhile and the client retries: the retry must wait
    // for the claim (409 in progress, or the answer), never hear "expired before it was used" for
    // a key whose operation is running (a client told so gets a new key and pays again).
    String key = issuedKeys.issue("t1", "create_slow_thing").key().value();
    ExecutorService pool = Executors.newFixedThreadPool(1);
    try {
      Future<HttpResponse<String>> first = pool.submit(() -> send(slowThing(key)));
      assertThat(Handlers.slowEntered.await(30, TimeUnit.SECONDS)).isTrue();
      issuedKeysClock.advance(Duration.ofHours(2));

      HttpResponse<String> retry;
      try {
        retry = send(slowThing(key));
      } finally {
        Handlers.slowRelease.countDown();
      }
      HttpResponse<String> answered = first.get(60, TimeUnit.SECONDS);
      HttpResponse<String> later = send(slowThing(key));

      assertThat(retry.body()).doesNotContain("IDEMPOTENCY_KEY_NOT_ISSUED");
      assertThat(retry.statusCode())
          .as("the retry while the first request ran: " + retry.body())
          .isIn(201, 409);
      assertThat(answered.statusCode()).isEqualTo(201);
      assertThat(later.statusCode()).as(later.body()).isEqualTo(201);
      assertThat(later.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(later.body()).isEqualTo(answered.body());
      assertThat(Handlers.slowThings).as("the operation ran once").hasValue(1);
      assertThat(records(key)).isOne();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anIssuedKeyPastItsValidityStartsNothing() throws Exception {
    String key = issuedKeys.issue("t1", "create_slow_thing").key().value();
    issuedKeysClock.advance(Duration.ofHours(2));

    HttpResponse<String> r = send(slowThing(key));

    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).contains("\"errorCode\":\"IDEMPOTENCY_KEY_NOT_ISSUED\"");
    assertThat(records(key)).as("the claim made for the check is rolled back").isZero();
  }

  private HttpRequest.Builder slowThing(String key) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/slow-things"))
        .header("Content-Type", "application/json")
        .header("X-Tenant", "t1")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"slow\"}"));
  }

  private HttpRequest.Builder anonymous() {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/things"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"a\"}"));
  }

  private HttpRequest.Builder thing(String key) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/things"))
        .header("Content-Type", "application/json")
        .header("X-Tenant", "t1")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"a\"}"));
  }

  private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private long records(String key) {
    return jdbc.queryForObject(
        "select count(*) from idemkit_record where idem_key = ?", Long.class, key);
  }
}
