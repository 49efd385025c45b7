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
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * On shards, an operator's work on a tenant runs on that tenant's shard, and work on the whole
 * service on every shard: the service on two databases, a tenant moved to the shard that is not the
 * operator's own (a request is bound to its caller's shard), then its data key rotated, a master
 * key's re-wrap counting the keys on every shard, and its erasure, each checked in both databases.
 */
class ShardedOperatorsIT {

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
