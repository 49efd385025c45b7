package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.StaticKeyProvider;
import dev.idemkit.examples.payments.demo.MailSimulator;
import dev.idemkit.examples.provider.ProviderSimulator;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.spring.boot.TenantDirectory;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * On shards, an operator's work on a tenant runs on that tenant's shard, and work on the whole
 * service on every shard: the service on two databases, a tenant moved to the shard that is not the
 * operator's own (a request is bound to its caller's shard), then its data key rotated, a master
 * key's re-wrap counting the keys on every shard, and its erasure, each checked in both databases.
 * A tenant set moving is answered 503 as the API document served on shards says.
 */
class ShardedOperatorsIT {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String ADMIN = "sk_sharded_admin";
  private static final String OPERATOR_NAME = "sharded_operator";

  /** The operator's principal, whose name places its requests on a shard. */
  private static final String OPERATOR = "admin:" + OPERATOR_NAME;

  private static final String API_KEY = "sk_test_sharded";
  private static final String TENANT = "tenant_sharded";

  private static EmbeddedPostgres server;
  private static ProviderSimulator provider;
  private static MailSimulator mail;
  private static ConfigurableApplicationContext service;
  private static int port;

  @BeforeAll
  static void startOnTwoShards() throws Exception {
    server =
        IdemkitDatabase.embeddedServer(HttpTestSupport.ownDataDir("sharded-operators-pg"), 100)
            .start();
    try (Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create database shard_a");
      s.execute("create database shard_b");
    }
    String base = "jdbc:postgresql://localhost:" + server.getPort() + "/";
    // Outside the embedded demo the service takes its provider, mail service and secrets from
    // configuration, as a deployment's would be.
    provider =
        ProviderSimulator.start(ProviderSimulator.Config.defaults(0), server.getPostgresDatabase());
    mail = MailSimulator.start(0, "", server.getPostgresDatabase(), JsonMapper.builder().build());
    service =
        HttpTestSupport.startService(
            HttpTestSupport.ownDataDir("sharded-operators-unused"),
            "--idemkit.shards.a.url=" + base + "shard_a",
            "--idemkit.shards.a.username=postgres",
            "--idemkit.shards.b.url=" + base + "shard_b",
            "--idemkit.shards.b.username=postgres",
            "--idemkit.shards-directory-refresh=PT0.2S",
            "--payments.provider.url=http://127.0.0.1:" + provider.port(),
            "--payments.mail.url=http://127.0.0.1:" + mail.port(),
            "--idemkit.issued-keys.secret=sharded-operators-issued-keys-secret",
            "--payments.admin-api-keys." + ADMIN + "=" + OPERATOR_NAME,
            "--idemkit.protection.encryption.master-keys.it-mk1="
                + StaticKeyProvider.newKeyBase64(),
            "--idemkit.protection.encryption.current-master-key=it-mk1",
            "--idemkit.protection.fingerprint.hmac-keys.it-fk1=" + StaticKeyProvider.newKeyBase64(),
            "--idemkit.protection.fingerprint.current-hmac-key=it-fk1",
            "--payments.api-keys." + API_KEY + "=" + TENANT);
    port = Integer.parseInt(service.getEnvironment().getProperty("local.server.port"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (service != null) {
      service.close();
    }
    if (mail != null) {
      mail.close();
    }
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void anOperatorsWorkOnATenantRunsOnItsShardAndOnTheServiceOnEveryShard() throws Exception {
    String operatorsShard = service.getBean(TenantDirectory.class).placement(OPERATOR).shard();
    String tenantsShard = operatorsShard.equals("a") ? "b" : "a";
    HttpResponse<String> moved =
        send(
            "POST",
            "/v1/admin/tenants/" + TENANT + "/move",
            ADMIN,
            "{\"shard\":\"" + tenantsShard + "\"}");
    assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);

    String reference = "sharded-" + UUID.randomUUID();
    String paymentKey = UUID.randomUUID().toString();
    HttpResponse<String> paid =
        send(
            "POST",
            "/v1/payments",
            API_KEY,
            paymentKey,
            HttpTestSupport.payment(reference, "12.00"));
    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(201);
    assertThat(count(tenantsShard, "select count(*) from payment where tenant_id = ?"))
        .isEqualTo(1);
    assertThat(count(operatorsShard, "select count(*) from payment where tenant_id = ?")).isZero();
    long keysBefore = count(tenantsShard, "select count(*) from idemkit_data_key where tenant = ?");
    assertThat(keysBefore).as("the tenant's data key, on its shard").isPositive();

    // Its record is read where it is.
    String operation =
        JdbcClient.create(server.getDatabase("postgres", "shard_" + tenantsShard))
            .sql("select operation from idemkit_record where tenant = ? and idem_key = ?")
            .param(TENANT)
            .param(paymentKey)
            .query(String.class)
            .single();
    HttpResponse<String> record =
        send(
            "GET",
            "/v1/admin/idempotency/records/" + TENANT + "/" + operation + "/" + paymentKey,
            ADMIN,
            null);
    assertThat(record.statusCode()).as(record.body()).isEqualTo(200);
    assertThat(record.body()).contains("\"state\":\"COMPLETED\"");
    HttpResponse<String> recovery = send("GET", "/v1/admin/idempotency/recovery", ADMIN, null);
    assertThat(recovery.statusCode()).as(recovery.body()).isEqualTo(200);

    // Rotation makes the new key on the tenant's shard.
    HttpResponse<String> rotated =
        send("POST", "/v1/admin/tenants/" + TENANT + "/data-keys", ADMIN, "");
    assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
    assertThat(count(tenantsShard, "select count(*) from idemkit_data_key where tenant = ?"))
        .isEqualTo(keysBefore + 1);
    assertThat(count(operatorsShard, "select count(*) from idemkit_data_key where tenant = ?"))
        .isZero();

    // The current master key still wraps the tenant's keys, on the other shard: not "nothing to
    // re-wrap", which would let an operator remove a key still in use.
    String current =
        service.getEnvironment().getProperty("idemkit.protection.encryption.current-master-key");
    HttpResponse<String> rewrap =
        send("POST", "/v1/admin/master-keys/" + current + "/rewrap", ADMIN, "");
    assertThat(rewrap.statusCode()).as(rewrap.body()).isEqualTo(409);
    assertThat(rewrap.body()).contains("MASTER_KEY_STILL_WRAPS_DATA_KEYS");

    // An event of the tenant parked on its shard is counted, listed and re-queued from there.
    UUID parked = parkOneEvent(tenantsShard);
    HttpResponse<String> backlog = send("GET", "/v1/admin/events/outbox", ADMIN, null);
    assertThat(backlog.statusCode()).as(backlog.body()).isEqualTo(200);
    assertThat(backlog.body()).contains("\"parkedEvents\":1");
    HttpResponse<String> listed = send("GET", "/v1/admin/events/outbox/parked", ADMIN, null);
    assertThat(listed.body()).contains(parked.toString()).contains("\"count\":1");
    HttpResponse<String> requeued =
        send("POST", "/v1/admin/events/outbox/parked/" + parked + "/requeue", ADMIN, "");
    assertThat(requeued.statusCode()).as(requeued.body()).isEqualTo(200);
    assertThat(
            count(
                tenantsShard,
                "select count(*) from idemkit_outbox where tenant = ? and parked_at is not null"))
        .isZero();

    // Erasure deletes the tenant's rows and keys where they are.
    HttpResponse<String> erased =
        send("DELETE", "/v1/admin/tenants/" + TENANT + "/data", ADMIN, null);
    assertThat(erased.statusCode()).as(erased.body()).isEqualTo(200);
    assertThat(erased.body()).contains("\"payment\":1");
    for (String shard : List.of("a", "b")) {
      assertThat(count(shard, "select count(*) from payment where tenant_id = ?"))
          .as("payments on shard %s", shard)
          .isZero();
      assertThat(count(shard, "select count(*) from idemkit_data_key where tenant = ?"))
          .as("data keys on shard %s", shard)
          .isZero();
    }
  }

  /** Parks one of the tenant's events once the relay has sent them all: its id. */
  private static UUID parkOneEvent(String shard) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (count(shard, "select count(*) from idemkit_outbox where tenant = ? and sent_at is null")
            > 0
        && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    return JdbcClient.create(server.getDatabase("postgres", "shard_" + shard))
        .sql(
            """
            update idemkit_outbox
               set sent_at = null, parked_at = now(), attempts = 8, last_error = 'test: parked'
             where event_id = (select min(event_id::text)::uuid from idemkit_outbox
                                where tenant = ?)
            returning event_id
            """)
        .param(TENANT)
        .query(UUID.class)
        .single();
  }

  /**
   * A tenant set moving in the directory is answered 503 {@code TENANT_MOVING} with {@code
   * Retry-After} on its own endpoints and on an operator's endpoint on it, and the API document the
   * service serves on shards says so for those endpoints, and not for the move itself; it lists no
   * redirect (no regions here).
   */
  @Test
  void aMovingTenantIsAnswered503AsTheApiDocumentSays() throws Exception {
    HttpResponse<String> docs =
        HttpTestSupport.send(
            HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/v3/api-docs"))
                .build());
    assertThat(docs.statusCode()).isEqualTo(200);
    JsonNode doc = JSON.readTree(docs.body());
    for (List<String> operation :
        List.of(
            List.of("post", "/v1/payments"),
            List.of("post", "/v1/orders/{orderId}/confirm-payment"),
            List.of("delete", "/v1/admin/tenants/{tenant}/data"),
            List.of("get", "/v1/admin/idempotency/records/{tenant}/{operation}/{key}"))) {
      JsonNode answer = answer(doc, operation.get(0), operation.get(1), 503);
      assertThat(
              answer
                  .at("/content/application~1problem+json/examples/TENANT_MOVING")
                  .isMissingNode())
          .as("%s", operation)
          .isFalse();
      assertThat(answer.at("/headers/Retry-After").isMissingNode()).as("%s", operation).isFalse();
    }
    assertThat(
            answer(doc, "post", "/v1/admin/tenants/{tenant}/move", 503)
                .at("/content/application~1problem+json/examples/TENANT_MOVING")
                .isMissingNode())
        .isTrue();
    assertThat(answer(doc, "post", "/v1/payments", 307).isMissingNode()).isTrue();

    TenantDirectory directory = service.getBean(TenantDirectory.class);
    TenantDirectory.Placement before = directory.placement(TENANT);
    JdbcClient rows =
        JdbcClient.create(server.getDatabase("postgres", "shard_" + directory.directoryShard()));
    rows.sql(
            """
            insert into idemkit_tenant_shard (tenant, shard, state, target, version)
            values (:tenant, :shard, 'MOVING', :target, :version)
            on conflict (tenant) do update
               set state = 'MOVING', target = :target, version = :version
            """)
        .param("tenant", TENANT)
        .param("shard", before.shard())
        .param("target", before.shard().equals("a") ? "b" : "a")
        .param("version", before.version() + 1)
        .update();
    try {
      awaitState(directory, TenantDirectory.State.MOVING);
      HttpResponse<String> paid =
          send(
              "POST",
              "/v1/payments",
              API_KEY,
              HttpTestSupport.payment("moving-" + UUID.randomUUID(), "3.00"));
      HttpResponse<String> erased =
          send("DELETE", "/v1/admin/tenants/" + TENANT + "/data", ADMIN, null);
      for (HttpResponse<String> refused : List.of(paid, erased)) {
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).contains("1");
        assertThat(JSON.readTree(refused.body()).get("errorCode").asString())
            .isEqualTo("TENANT_MOVING");
      }
    } finally {
      if (before.version() == 0) {
        rows.sql("delete from idemkit_tenant_shard where tenant = ?").param(TENANT).update();
      } else {
        rows.sql(
                "update idemkit_tenant_shard set state = 'ACTIVE', target = null, version = ?"
                    + " where tenant = ?")
            .param(before.version() + 2)
            .param(TENANT)
            .update();
      }
      awaitState(directory, TenantDirectory.State.ACTIVE);
    }
  }

  /**
   * Parked messages listed from both shards are at most {@code limit} per consumer, as on one
   * database: two parked on each shard, listed with {@code limit=3}.
   */
  @Test
  void parkedMessagesOfBothShardsAreListedUpToTheLimitPerConsumer() {
    List<UUID> ids = new ArrayList<>();
    for (String shard : List.of("a", "b")) {
      for (int i = 0; i < 2; i++) {
        UUID id = UUID.randomUUID();
        ids.add(id);
        JdbcClient.create(server.getDatabase("postgres", "shard_" + shard))
            .sql(
                """
                insert into idemkit_inbox (consumer_name, message_id, status, attempts,
                    received_at, last_error, event_type, tenant, aggregate_type, aggregate_id,
                    sequence, occurred_at, payload)
                values ('shipping', ?, 'PARKED', 5, now(), 'carrier down', 'OrderPaid', ?,
                    'order', ?, 1, now(), '{}')
                """)
            .params(id, TENANT, id.toString())
            .update();
      }
    }
    try {
      HttpResponse<String> all = send("GET", "/v1/admin/events/inbox/parked", ADMIN, null);
      assertThat(all.statusCode()).as(all.body()).isEqualTo(200);
      assertThat(ids).allSatisfy(id -> assertThat(all.body()).contains(id.toString()));
      HttpResponse<String> three =
          send("GET", "/v1/admin/events/inbox/parked?limit=3", ADMIN, null);
      assertThat(three.statusCode()).as(three.body()).isEqualTo(200);
      assertThat(JSON.readTree(three.body()).get("count").asInt()).isEqualTo(3);
    } finally {
      for (String shard : List.of("a", "b")) {
        JdbcClient.create(server.getDatabase("postgres", "shard_" + shard))
            .sql("delete from idemkit_inbox where message_id = any (?)")
            .param(ids.toArray(UUID[]::new))
            .update();
      }
    }
  }

  /** The document's answer of an operation with a status (a missing node if it has none). */
  private static JsonNode answer(JsonNode doc, String method, String path, int status) {
    return doc.at("/paths/" + path.replace("/", "~1") + "/" + method + "/responses/" + status);
  }

  private static void awaitState(TenantDirectory directory, TenantDirectory.State state)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (directory.placement(TENANT).state() != state && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(directory.placement(TENANT).state()).isEqualTo(state);
  }

  private static long count(String shard, String sql) {
    DataSource db = server.getDatabase("postgres", "shard_" + shard);
    return JdbcClient.create(db).sql(sql).param(TENANT).query(Long.class).single();
  }

  private static HttpResponse<String> send(String method, String path, String key, String json) {
    return send(method, path, key, UUID.randomUUID().toString(), json);
  }

  private static HttpResponse<String> send(
      String method, String path, String key, String idempotencyKey, String json) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + key)
            .header("Idempotency-Key", idempotencyKey);
    if (json == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(json));
    }
    return HttpTestSupport.send(b.build());
  }
}
