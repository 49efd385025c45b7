package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.micrometer.IdempotencyMetricNames;
import dev.idemkit.micrometer.MicrometerIdempotencyListener;
import dev.idemkit.spi.CleanupResult;
import dev.idemkit.testing.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The starter's record-life workers themselves on PostgreSQL: the recovery worker's passes space
 * out the attempts on an unknown outcome as documented (the first at once, then {@code backoff},
 * twice as long each time) and escalate it at the limit; two cleanup workers, each with its own
 * pool, clean the same database at once without dropping a row twice or touching a live record, and
 * their meters count what they dropped.
 */
class RecordLifeWorkersIT {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;
  private static DataSource dataSource;
  private static JdbcTemplate jdbc;

  private final String tenant = "workers-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 6);
    dataSource = database.dataSource();
    jdbc = new JdbcTemplate(dataSource);
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  // ---- recovery -------------------------------------------------------------------------------

  @Test
  void theRecoveryWorkerWaitsBackoffAfterItsFirstAttemptThenDoublesThenEscalates() {
    MutableClock clock =
        new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS).plus(Duration.ofDays(100)));
    PostgresIdempotencyStore store =
        PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource)).clock(clock).build();
    Idempotency idempotency =
        Idempotency.create(
            store,
            IdempotencyConfig.builder()
                .lease(Duration.ofSeconds(30))
                .defaultTtl(Duration.ofHours(24))
                .build());
    IdemkitProperties.Recovery settings = new IdemkitProperties.Recovery();
    Duration backoff = Duration.ofSeconds(10);
    settings.setBackoff(backoff);
    settings.setMaxBackoff(Duration.ofHours(1));
    settings.setMaxAttempts(5);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    String operation = "charge_" + UUID.randomUUID().toString().substring(0, 8);
    RecoverableOperation stillUnknown =
        new RecoverableOperation() {
          @Override
          public String operation() {
            return operation;
          }

          @Override
          public PhasedOperation<?> resume(IdempotencyRecord record) {
            return charge();
          }
        };
    IdempotencyRecoveryWorker worker =
        new IdempotencyRecoveryWorker(
            idempotency,
            store,
            List.of(stillUnknown),
            Duration.ofSeconds(5),
            10,
            settings,
            MicrometerIdempotencyListener.create(registry));
    ScopedKey id = ScopedKey.of(tenant, operation, "k-unknown");

    Outcome first =
        idempotency.execute(
            new IdempotentRequest(
                id, Fingerprint.of(Map.of("amount", "7.00")), Duration.ofHours(24)),
            charge());
    assertThat(first).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(recoveryDue(id))
        .as("the worker's first attempt is due at once")
        .isEqualTo(clock.instant());

    List<Duration> waits = new ArrayList<>();
    for (int pass = 1; pass <= 3; pass++) {
      Instant attemptedAt = clock.instant();
      assertThat(worker.recoverOnce().stillPending()).as("pass %d", pass).isEqualTo(1);
      Instant due = recoveryDue(id);
      waits.add(Duration.between(attemptedAt, due));
      clock.set(due.minusMillis(1));
      assertThat(worker.recoverOnce().found()).as("nothing due before its time").isZero();
      clock.set(due);
    }
    assertThat(waits)
        .as("backoff after the worker's first attempt, then twice as long each time")
        .containsExactly(backoff, backoff.multipliedBy(2), backoff.multipliedBy(4));
    assertThat(registry.find(IdempotencyMetricNames.ESCALATED_COUNT).counter()).isNull();

    assertThat(worker.recoverOnce().stillPending()).isEqualTo(1);
    IdempotencyRecord escalated = store.find(id).orElseThrow();
    assertThat(escalated.state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
    assertThat(escalated.recoveryAttempts())
        .as("the first request's attempt and the worker's four")
        .isEqualTo(5);
    assertThat(recoveryDue(id)).as("escalated: no automatic attempt").isNull();
    assertThat(store.findEscalated(100)).extracting(IdempotencyRecord::id).contains(id);
    assertThat(registry.get(IdempotencyMetricNames.ESCALATED_COUNT).counter().count())
        .isEqualTo(1.0);
    clock.advance(Duration.ofDays(1));
    assertThat(worker.recoverOnce().found()).isZero();
  }

  /** An external call whose answer is lost, and whose lookup cannot tell either. */
  private static PhasedOperation<Map<String, String>> charge() {
    return PhasedOperation.builder()
        .external(
            "CHARGED",
            call ->
                call.call(
                        (ctx, d) -> {
                          throw new IOException("connection reset after the request");
                        })
                    .lookup((ctx, d) -> CallResult.unknown("provider unreachable")))
        .complete(
            (ctx, d) ->
                OperationResult.success(
                    StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))));
  }

  private Instant recoveryDue(ScopedKey id) {
    Timestamp due =
        jdbc.queryForObject(
            "select recovery_due from idemkit_record"
                + " where tenant = ? and operation = ? and idem_key = ?",
            Timestamp.class,
            id.tenant(),
            id.operation(),
            id.key().value());
    return due == null ? null : due.toInstant();
  }

  // ---- cleanup --------------------------------------------------------------------------------

  @Test
  void twoCleanupWorkersOnOneDatabaseShareTheWorkAndCountItInTheirMeters() throws Exception {
    int done = 2500;
    int recent = 700;
    insertRecords("done", done, "COMPLETED", "-2 days");
    insertRecords("recent", recent, "COMPLETED", "-2 hours");
    insertRecords("busy", 20, "IN_PROGRESS", "-2 days");
    insertRecords("unknown", 20, "UNKNOWN_REQUIRES_RECOVERY", "-2 days");
    insertRecords("fresh", 50, "COMPLETED", "+1 hour");
    jdbc.update(
        "insert into idemkit_record_history (tenant, operation, idem_key, event, state,"
            + " fencing_token, at) select tenant, operation, idem_key, 'FINISH', state, 1, now()"
            + " from idemkit_record where tenant = ?",
        tenant);
    IdemkitProperties.Cleanup settings = new IdemkitProperties.Cleanup();
    settings.setBatchSize(100);
    settings.setBodyRetention(Duration.ZERO);
    settings.setMetadataRetention(Duration.ofDays(1));
    settings.setPause(Duration.ofMillis(2));

    HikariDataSource hikari = (HikariDataSource) dataSource;
    String url = hikari.getJdbcUrl();
    List<IdemkitDatabase> pools = new ArrayList<>();
    List<SimpleMeterRegistry> registries = new ArrayList<>();
    List<IdempotencyCleanupWorker> workers = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      IdemkitDatabase pool =
          IdemkitDatabase.connect(url, hikari.getUsername(), hikari.getPassword(), 2);
      pools.add(pool);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      registries.add(registry);
      workers.add(
          new IdempotencyCleanupWorker(
              PostgresIdempotencyStore.create(pool.dataSource()),
              MicrometerIdempotencyListener.create(registry),
              settings));
    }
    List<CleanupResult> results = new ArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<CleanupResult>> runs = new ArrayList<>();
      for (IdempotencyCleanupWorker worker : workers) {
        runs.add(
            threads.submit(
                () -> {
                  go.await();
                  return worker.cleanUpOnce();
                }));
      }
      go.countDown();
      for (Future<CleanupResult> run : runs) {
        results.add(run.get(2, TimeUnit.MINUTES));
      }
    } finally {
      threads.shutdownNow();
      pools.forEach(IdemkitDatabase::close);
    }

    long bodies = results.stream().mapToLong(CleanupResult::bodiesDropped).sum();
    long records = results.stream().mapToLong(CleanupResult::recordsDeleted).sum();
    assertThat(bodies)
        .as("each expired body dropped once across the workers")
        .isEqualTo(done + recent);
    assertThat(records).as("each record past its metadata retention deleted once").isEqualTo(done);
    assertThat(count("idem_key like 'done-%'")).isZero();
    assertThat(
            count(
                "idem_key like 'recent-%' and response_body is null and body_dropped_at is not null"))
        .as("past the window: body dropped, metadata kept")
        .isEqualTo(recent);
    assertThat(
            count(
                "state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY') and response_body is not null"))
        .as("live records untouched")
        .isEqualTo(40);
    assertThat(count("idem_key like 'fresh-%' and response_body is not null")).isEqualTo(50);
    assertThat(historyCount("idem_key like 'done-%'")).as("history went with its record").isZero();
    assertThat(historyCount("true")).isEqualTo(recent + 40 + 50);

    for (int i = 0; i < 2; i++) {
      assertThat(cleanupRows(registries.get(i), "body"))
          .as("worker %d's meter, bodies", i)
          .isEqualTo(results.get(i).bodiesDropped());
      assertThat(cleanupRows(registries.get(i), "record"))
          .as("worker %d's meter, records", i)
          .isEqualTo(results.get(i).recordsDeleted());
    }
    assertThat(cleanupRows(registries.get(0), "body") + cleanupRows(registries.get(1), "body"))
        .isEqualTo(done + recent);
    assertThat(cleanupRows(registries.get(0), "record") + cleanupRows(registries.get(1), "record"))
        .isEqualTo(done);
  }

  private static long cleanupRows(MeterRegistry registry, String kind) {
    return (long)
        Search.in(registry)
            .name(IdempotencyMetricNames.CLEANUP_ROWS)
            .tag(IdempotencyMetricNames.TAG_CLEANUP_KIND, kind)
            .counters()
            .stream()
            .mapToDouble(c -> c.count())
            .sum();
  }

  private void insertRecords(String prefix, int n, String state, String expiresIn) {
    jdbc.update(
        "insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,"
            + " fencing_token, locked_until, response_status, response_body, created_at,"
            + " updated_at, expires_at) select ?, 'create_payment', ? || '-' || g,"
            + " 'v1:sha256:abc', ?, 1, now(), 201, convert_to('{\"body\":' || g || '}', 'UTF8'),"
            + " now(), now(), now() + cast(? as interval) from generate_series(1, ?) g",
        tenant,
        prefix,
        state,
        expiresIn,
        n);
  }

  private long count(String condition) {
    return jdbc.queryForObject(
        "select count(*) from idemkit_record where tenant = ? and " + condition,
        Long.class,
        tenant);
  }

  private long historyCount(String condition) {
    return jdbc.queryForObject(
        "select count(*) from idemkit_record_history where tenant = ? and " + condition,
        Long.class,
        tenant);
  }
}
