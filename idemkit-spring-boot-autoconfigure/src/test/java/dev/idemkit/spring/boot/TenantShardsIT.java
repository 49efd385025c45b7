package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.QuotaSync;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Tenants on two shards (two databases on the machine's PostgreSQL, made for this test and dropped
 * after): a request's business row, record and outbox event land on its tenant's shard only, in one
 * transaction; the fence refuses a fenced tenant's writes with their business rows; a tenant moves
 * from one shard to the other and back while many threads send it new keys and retries (and another
 * tenant on the same shard is never refused), and every key answered 2xx is answered the same
 * after, with one business row, on its new shard only; each shard's cleanup lane cleans its own
 * shard; the store's quota exchange counts live records on every shard ({@link ShardedQuotaSync},
 * whose effect {@link ShardedQuotaSyncIT} checks).
 */
@SpringBootTest(
    classes = TenantShardsIT.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "idemkit.shards-directory-refresh=50ms",
      "idemkit.cleanup.interval=200ms",
      "idemkit.cleanup.metadata-retention=1d"
    })
class TenantShardsIT {

  static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";
  private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  private static final String DB_A = "idemkit_shard_a_" + SUFFIX;
  private static final String DB_B = "idemkit_shard_b_" + SUFFIX;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** Where a request of a tenant writes: its order, its record, its event. */
  static final List<String> TENANT_TABLES = List.of("orders", "idemkit_record", "idemkit_outbox");

  @LocalServerPort int port;
  @Autowired TenantShards shards;
  @Autowired TenantDirectory directory;
  @Autowired IdempotencyStore store;

  @DynamicPropertySource
  static void shards(DynamicPropertyRegistry registry) throws SQLException {
    createShardDatabases(DB_A, DB_B);
    registry.add("idemkit.shards.a.url", () -> SERVER + DB_A);
    registry.add("idemkit.shards.a.username", () -> "postgres");
    registry.add("idemkit.shards.b.url", () -> SERVER + DB_B);
    registry.add("idemkit.shards.b.username", () -> "postgres");
    registry.add("idemkit.shards.b.maximum-pool-size", () -> "12");
  }

  @AfterAll
  static void dropDatabases() throws SQLException {
    dropDatabases(DB_A, DB_B);
  }

  /**
   * Makes each database on the machine's PostgreSQL with the application's own migrations (the
   * orders table, on every shard as its migration strategy would) and the outbox's tables.
   */
  static void createShardDatabases(String... dbs) throws SQLException {
    Map<String, DataSource> shards = new HashMap<>();
    for (String db : dbs) {
      try (Connection c = DriverManager.getConnection(SERVER + "test", "postgres", "");
          Statement s = c.createStatement()) {
        s.execute("create database " + db);
      }
      shards.put(db, plain(db));
    }
    assertThat(
            new TenantShards(shards)
                .migrateEach(
                    Flyway.configure()
                        .locations("classpath:dev/idemkit/spring/boot/shards-it-migration")
                        .load()))
        .isEqualTo(dbs.length);
    for (DataSource shard : shards.values()) {
      OutboxSchema.migrate(shard);
    }
  }

  static void dropDatabases(String... dbs) throws SQLException {
    try (Connection c = DriverManager.getConnection(SERVER + "test", "postgres", "");
        Statement s = c.createStatement()) {
      for (String db : dbs) {
        s.execute("drop database if exists " + db + " with (force)");
      }
    }
  }

  static DataSource plain(String db) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(SERVER + db);
    ds.setUser("postgres");
    return ds;
  }

  @Configuration
  @EnableAutoConfiguration
  @Import(Orders.class)
  static class App {
    @Bean
    IdempotencyTenantResolver tenants() {
      return request -> request.getHeader("X-Tenant");
    }

    @Bean
    Outbox outbox(DataSource dataSource) {
      return Outbox.create(dataSource);
    }
  }

  /** An order and its event in the request's transaction; a negative amount fails after both. */
  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;
    private final DataSource dataSource;
    private final Outbox outbox;

    Orders(JdbcTemplate jdbc, DataSource dataSource, Outbox outbox) {
      this.jdbc = jdbc;
      this.dataSource = dataSource;
      this.outbox = outbox;
    }

    /** The tenant and the key in the path, as the fingerprint covers it (the test's shortcut). */
    @PostMapping("/orders/{tenant}/{key}/{amount}")
    @Idempotent(operation = "create_order")
    ResponseEntity<String> create(
        @PathVariable String tenant, @PathVariable String key, @PathVariable int amount)
        throws SQLException {
      UUID id = UUID.randomUUID();
      jdbc.update(
          "insert into orders (id, tenant, idem_key, amount) values (?, ?, ?, ?)",
          id,
          tenant,
          key,
          amount);
      outbox.append(
          DataSourceUtils.getConnection(dataSource),
          new NewEvent(
              "order_created", tenant, "order", id.toString(), key, "{\"amount\":" + amount + "}"));
      if (amount < 0) {
        throw new IllegalArgumentException("negative amount");
      }
      return ResponseEntity.status(201).body("{\"order\":\"" + id + "\"}");
    }
  }

  record Answer(int status, String body) {}

  private Answer post(String tenant, String key, int amount) throws Exception {
    HttpResponse<String> response =
        send(URI.create("http://localhost:" + port + path(tenant, key, amount)), tenant, key);
    if (response.statusCode() == 503) {
      assertThat(response.headers().firstValue("Retry-After")).contains("1");
    }
    return new Answer(response.statusCode(), response.body());
  }

  /** The order endpoint's path for a tenant, a key and an amount. */
  static String path(String tenant, String key, int amount) {
    return "/orders/" + tenant + "/" + key + "/" + amount;
  }

  /** POSTs to {@code uri} as {@code tenant} with {@code key}; no redirect followed. */
  static HttpResponse<String> send(URI uri, String tenant, String key) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(uri)
            .header("X-Tenant", tenant)
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static JdbcTemplate on(String db) {
    return new JdbcTemplate(plain(db));
  }

  static long count(String db, String table, String tenant) {
    return on(db)
        .queryForObject("select count(*) from " + table + " where tenant = ?", Long.class, tenant);
  }

  private TenantMove move() {
    return new TenantMove(shards, directory, List.of(new TenantMove.Table("orders", "tenant")));
  }

  /** A new tenant named from {@code name}, listed in the directory on {@code shard}. */
  private String placed(String name, String shard) throws SQLException {
    String tenant = name + "-" + UUID.randomUUID().toString().substring(0, 6);
    move().move(tenant, shard);
    return tenant;
  }

  @Test
  void aRequestWritesItsTenantsShardOnlyInOneTransaction() throws Exception {
    String onA = placed("on-a", "a");
    String onB = placed("on-b", "b");

    assertThat(post(onA, "k1", 5).status()).isEqualTo(201);
    assertThat(post(onB, "k1", 7).status()).isEqualTo(201);

    for (String table : TENANT_TABLES) {
      assertThat(count(DB_A, table, onA)).as("%s of %s on a", table, onA).isEqualTo(1);
      assertThat(count(DB_B, table, onA)).as("%s of %s on b", table, onA).isZero();
      assertThat(count(DB_B, table, onB)).as("%s of %s on b", table, onB).isEqualTo(1);
      assertThat(count(DB_A, table, onB)).as("%s of %s on a", table, onB).isZero();
    }

    // The handler wrote its order and its event, then failed: all of it rolled back, record too.
    assertThat(post(onA, "k2", -1).status()).isEqualTo(500);
    assertThat(on(DB_A).queryForObject("select count(*) from orders where amount < 0", Long.class))
        .isZero();
    for (String table : TENANT_TABLES) {
      assertThat(count(DB_A, table, onA)).as("%s of %s after the failure", table, onA).isEqualTo(1);
    }

    assertThatThrownBy(() -> shards.getConnection())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("No shard is bound");
  }

  @Test
  void theStoresQuotaExchangeCountsLiveRecordsOnEveryShard() {
    assertThat(store.capability(QuotaSync.class)).get().isInstanceOf(ShardedQuotaSync.class);
  }

  @Test
  void aFencedTenantsWriteFailsAndTakesItsBusinessRowDown() throws Exception {
    String fenced = placed("fenced", "a");
    String other = placed("other", "a");
    TenantFence.fence(plain(DB_A), fenced);

    Answer refused = post(fenced, "k1", 5);
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.body()).contains("\"errorCode\":\"TENANT_MOVING\"");
    assertThat(count(DB_A, "orders", fenced)).isZero();
    assertThat(count(DB_A, "idemkit_record", fenced)).isZero();
    // A business write outside any request: the application's table has the fence's trigger too.
    assertThatThrownBy(
            () ->
                on(DB_A)
                    .update(
                        "insert into orders (id, tenant, idem_key, amount) values (?, ?, 'x', 1)",
                        UUID.randomUUID(),
                        fenced))
        .hasRootCauseInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(TenantFence.isCauseOf(e)).isTrue());
    assertThat(count(DB_A, "orders", fenced)).isZero();

    assertThat(post(other, "k1", 5).status()).isEqualTo(201);
    assertThat(count(DB_A, "orders", other)).isEqualTo(1);
  }

  @Test
  void aTenantMovesUnderLoadAndBackAndEveryAnsweredKeyIsAnsweredTheSame() throws Exception {
    String moving = placed("moving", "a");
    String staying = placed("staying", "a");
    Map<String, Answer> answers = new ConcurrentHashMap<>();
    for (int i = 0; i < 20; i++) {
      Answer first = post(moving, "before-" + i, i);
      assertThat(first.status()).isEqualTo(201);
      answers.put("before-" + i, first);
    }

    race(moving, staying, "there", answers, "b");
    assertAllOn(moving, answers, DB_B, DB_A);

    race(moving, staying, "back", answers, "a");
    assertAllOn(moving, answers, DB_A, DB_B);
  }

  /**
   * Eight threads, released together, send new keys and retries of answered ones for {@code moving}
   * and new keys for {@code staying} while {@code moving} moves to {@code target}; each thread goes
   * on for 10 more requests after the move, then every key refused during it is sent again.
   */
  private void race(
      String moving, String staying, String round, Map<String, Answer> answers, String target)
      throws Exception {
    int threads = 8;
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch warmedUp = new CountDownLatch(threads * 5);
    AtomicBoolean moved = new AtomicBoolean();
    AtomicInteger refusedMoving = new AtomicInteger();
    List<String> refusedKeys = Collections.synchronizedList(new ArrayList<>());
    List<String> answeredKeys = new ArrayList<>(answers.keySet());
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> runs = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        int thread = t;
        runs.add(
            pool.submit(
                () -> {
                  go.await();
                  int after = 0;
                  for (int i = 0; after < 10; i++) {
                    if (moved.get()) {
                      after++;
                    }
                    String key = round + "-" + thread + "-" + i;
                    Answer fresh = post(moving, key, i);
                    if (fresh.status() == 503) {
                      assertThat(fresh.body()).contains("TENANT_MOVING");
                      refusedMoving.incrementAndGet();
                      refusedKeys.add(key);
                    } else {
                      assertThat(fresh.status()).as("new key %s", key).isEqualTo(201);
                      answers.put(key, fresh);
                    }
                    String old = answeredKeys.get((thread * 31 + i) % answeredKeys.size());
                    Answer retry = post(moving, old, amountOf(old));
                    if (retry.status() == 503) {
                      refusedMoving.incrementAndGet();
                    } else {
                      assertThat(retry).as("retry of %s", old).isEqualTo(answers.get(old));
                    }
                    assertThat(post(staying, key, i).status())
                        .as("the other tenant, key %s", key)
                        .isEqualTo(201);
                    warmedUp.countDown();
                  }
                  return null;
                }));
      }
      go.countDown();
      assertThat(warmedUp.await(2, TimeUnit.MINUTES)).isTrue();
      move().move(moving, target);
      moved.set(true);
      for (Future<?> run : runs) {
        run.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    for (String key : refusedKeys) {
      Answer later = post(moving, key, amountOf(key));
      assertThat(later.status()).as("refused key %s sent again", key).isEqualTo(201);
      answers.put(key, later);
    }
  }

  private static int amountOf(String key) {
    return Integer.parseInt(key.substring(key.lastIndexOf('-') + 1));
  }

  /** Every answered key answered the same, once in the business table, all on {@code home}. */
  private void assertAllOn(String tenant, Map<String, Answer> answers, String home, String away)
      throws Exception {
    for (var answered : answers.entrySet()) {
      assertThat(post(tenant, answered.getKey(), amountOf(answered.getKey())))
          .as("retry of %s after the move", answered.getKey())
          .isEqualTo(answered.getValue());
    }
    assertThat(
            on(home)
                .queryForObject(
                    "select count(distinct idem_key) = count(*) from orders where tenant = ?",
                    Boolean.class,
                    tenant))
        .as("one order per key")
        .isTrue();
    assertThat(count(home, "orders", tenant)).isEqualTo(answers.size());
    assertThat(count(home, "idemkit_record", tenant)).isEqualTo(answers.size());
    assertThat(count(home, "idemkit_outbox", tenant)).isEqualTo(answers.size());
    for (String table : TENANT_TABLES) {
      assertThat(count(away, table, tenant)).as("%s left on the old shard", table).isZero();
    }
    assertThat(directory.placement(tenant).shard()).isEqualTo(home.equals(DB_A) ? "a" : "b");
  }

  /** Interrupted after step 2 (directory MOVING, source fenced): running it again finishes it. */
  @Test
  void anInterruptedMoveIsFinishedByRunningItAgain() throws Exception {
    String tenant = placed("interrupted", "a");
    Answer first = post(tenant, "k-3", 3);
    assertThat(first.status()).isEqualTo(201);
    on(DB_A)
        .update(
            "update idemkit_tenant_shard set state = 'MOVING', target = 'b', version = version + 1"
                + " where tenant = ?",
            tenant);
    TenantFence.fence(plain(DB_A), tenant);
    directory.refresh();
    assertThat(post(tenant, "k-3", 3).status()).isEqualTo(503);

    assertThatThrownBy(() -> move().move(tenant, "a"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("finish that move first");
    move().move(tenant, "b");

    assertAllOn(tenant, Map.of("k-3", first), DB_B, DB_A);
  }

  /** An unlisted tenant follows the hash; pinning lists it where its records are. */
  @Test
  void pinningListsEveryTenantWhereItsRecordsAre() throws Exception {
    String tenant = "unlisted-" + UUID.randomUUID().toString().substring(0, 6);
    String hashed = directory.hashed(tenant);
    assertThat(directory.placement(tenant))
        .isEqualTo(new TenantDirectory.Placement(hashed, TenantDirectory.State.ACTIVE, 0));
    String elsewhere = hashed.equals("a") ? "b" : "a";
    record(elsewhere.equals("a") ? DB_A : DB_B, tenant, "1 hour");

    assertThat(directory.pinEveryTenant()).isPositive();

    assertThat(directory.placement(tenant).shard()).isEqualTo(elsewhere);
  }

  @Test
  void eachShardsCleanupLaneCleansItsOwnShard() throws Exception {
    String onA = placed("clean-a", "a");
    String onB = placed("clean-b", "b");
    record(DB_A, onA, "-2 days");
    record(DB_B, onB, "-2 days");

    awaitGone(DB_A, onA);
    awaitGone(DB_B, onB);
  }

  /** A completed record of {@code tenant} on {@code db} whose window ends {@code expiresIn}. */
  private void record(String db, String tenant, String expiresIn) {
    on(db)
        .update(
            """
            insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
                fencing_token, locked_until, response_status, response_body, created_at,
                updated_at, expires_at)
            values (?, 'create_order', 'old', 'v1:sha256:abc', 'COMPLETED', 1, now(), 201,
                    convert_to('{}', 'UTF8'), now() - interval '3 days',
                    now() - interval '3 days', now() + cast(? as interval))
            """,
            tenant,
            expiresIn);
  }

  /** The shard's lane deletes the record; waits for its runs (every 200 ms), at most a minute. */
  private void awaitGone(String db, String tenant) throws InterruptedException {
    for (int i = 0; i < 600 && count(db, "idemkit_record", tenant) > 0; i++) {
      Thread.sleep(100);
    }
    assertThat(count(db, "idemkit_record", tenant)).as("record of %s on %s", tenant, db).isZero();
  }
}
