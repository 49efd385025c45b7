package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

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
import dev.idemkit.testing.MutableClock;
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
}
