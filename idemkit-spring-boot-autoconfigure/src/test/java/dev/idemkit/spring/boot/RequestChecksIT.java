package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
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
    try {
      System.setProperty(
          "idemkit.embedded.data-dir",
          Files.createTempDirectory("request-checks-pg").toAbsolutePath().toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
    static final AtomicInteger things = new AtomicInteger();

    @PostMapping("/things")
    @Idempotent(operation = "create_thing")
    ResponseEntity<String> create(@RequestBody Map<String, Object> body) {
      things.incrementAndGet();
      return ResponseEntity.status(201).body("{\"thing\":" + things.get() + "}");
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
