package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.testing.MutableClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A record's life after its answer, on the embedded PostgreSQL: cleanup (bodies, then metadata and
 * history, by many instances at once), a key reused after its window, recovery backoff and
 * escalation, operator resolution, and the tenant quotas.
 */
class RecordLifeIT {

  private static final Duration TTL = Duration.ofHours(1);

  private IdemkitDatabase db;
  private DataSource dataSource;
  private final String tenant = "life-" + UUID.randomUUID().toString().substring(0, 8);
  private MutableClock clock;
  private PostgresIdempotencyStore store;
  private Idempotency idempotency;

  @BeforeEach
  void setUp() {
    db = TestDatabase.freshSchema(24);
    dataSource = db.dataSource();
    clock =
        new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS).plus(Duration.ofDays(400)));
    store = storeOnClock();
    idempotency =
        Idempotency.create(
            store,
            IdempotencyConfig.builder().lease(Duration.ofSeconds(30)).defaultTtl(TTL).build());
  }

  @AfterEach
  void tearDown() {
    db.close();
  }

  private PostgresIdempotencyStore storeOnClock() {
    return PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource)).clock(clock).build();
  }

  @Test
  void manyInstancesCleanUpEachRowOnceAndNeverTouchALiveRecord() throws Exception {
    int expired = 3000;
    insertRecords("done", expired, "COMPLETED", "-2 days");
    insertRecords("busy", 20, "IN_PROGRESS", "-2 days");
    insertRecords("unknown", 20, "UNKNOWN_REQUIRES_RECOVERY", "-2 days");
    insertRecords("fresh", 50, "COMPLETED", "+1 hour");
    sql(
        "insert into idemkit_record_history (tenant, operation, idem_key, event, state,"
            + " fencing_token, at) select tenant, operation, idem_key, 'FINISH', state, 1, now()"
            + " from idemkit_record where tenant = '"
            + tenant
            + "'");
    // Each instance: its own store, its own connection per batch, on the database's clock.
    int instances = 8;
    List<Long> dropped = race(instances, () -> untilDone(Duration.ZERO, Duration.ofDays(30)));

    assertThat(dropped.stream().mapToLong(Long::longValue).sum())
        .as("every expired body dropped exactly once across the instances")
        .isEqualTo(expired);
    assertThat(count("body_dropped_at is not null")).isEqualTo(expired);
    assertThat(count("response_body is not null")).isEqualTo(20 + 20 + 50);

    List<Long> deleted = race(instances, () -> untilDeleted(Duration.ZERO, Duration.ofDays(1)));

    assertThat(deleted.stream().mapToLong(Long::longValue).sum()).isEqualTo(expired);
    assertThat(count("true")).isEqualTo(20 + 20 + 50);
    assertThat(count("state = 'IN_PROGRESS' and response_body is not null")).isEqualTo(20);
    assertThat(count("state = 'UNKNOWN_REQUIRES_RECOVERY' and response_body is not null"))
        .isEqualTo(20);
    assertThat(historyCount("idem_key like 'done-%'"))
        .as("history pruned with its record")
        .isZero();
    assertThat(historyCount("true")).isEqualTo(20 + 20 + 50);
  }

  @Test
  void cleanupPassesStuckLiveRecordsOncePerRunNotOncePerBatch() throws Exception {
    // Live records past their window (owners that died, outcomes escalated to an operator) are
    // never cleaned up and stay first in the body walk's index. Expired bodies after them must
    // still go in batches that each read about what they drop.
    int stuck = 2000;
    int expired = 500;
    int batch = 50;
    insertRecords("busy", stuck / 2, "IN_PROGRESS", "-3 days");
    insertRecords("unknown", stuck / 2, "UNKNOWN_REQUIRES_RECOVERY", "-2 days");
    insertRecords("done", expired, "COMPLETED", "-1 day");
    ReadsCounted counted = new ReadsCounted();
    CleanupRun run = PostgresIdempotencyStore.builder(counted).build().beginRun();

    long dropped = 0;
    CleanupResult r;
    do {
      r = run.batch(Duration.ZERO, Duration.ofDays(30), batch);
      dropped += r.bodiesDropped();
    } while (r.bodiesDropped() == batch);

    assertThat(dropped).isEqualTo(expired);
    assertThat(count("idem_key like 'done-%' and body_dropped_at is not null")).isEqualTo(expired);
    assertThat(count("state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')"))
        .as("live records kept")
        .isEqualTo(stuck);
    assertThat(
            count(
                "state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')"
                    + " and body_dropped_at is null and response_body is not null"))
        .as("live records untouched")
        .isEqualTo(stuck);
    List<Long> reads = counted.bodyIndexReads;
    assertThat(reads).as("batches of the run").hasSize(expired / batch + 1);
    assertThat(reads.get(0))
        .as("the run's first batch reads past the live records once")
        .isGreaterThanOrEqualTo(stuck);
    assertThat(reads.subList(1, reads.size()))
        .as("index entries each later batch of the run read (the live records: %d)", stuck)
        // (a few hundred at most: its rows, and the entries of the rows dropped before it at the
        // same time, all 500 expired together, until the index marks them dead)
        .allSatisfy(n -> assertThat(n).isLessThan(stuck / 4L));
  }

  @Test
  void aRunThatGoesOnForMetadataDoesNotReadTheStuckLiveRecordsAgainForBodies() throws Exception {
    // No body is left to drop, but 300 records are past their metadata retention: the run goes on
    // for them, 50 a batch. The body walk reached the end in the run's first batch; its further
    // batches must not walk past the 2 000 live records again.
    int stuck = 2000;
    insertRecords("busy", stuck / 2, "IN_PROGRESS", "-3 days");
    insertRecords("unknown", stuck / 2, "UNKNOWN_REQUIRES_RECOVERY", "-2 days");
    insertRecords("old", 300, "COMPLETED", "-40 days");
    sql(
        "update idemkit_record set response_body = null, body_dropped_at = now() - interval '39"
            + " days' where idem_key like 'old-%'");
    ReadsCounted counted = new ReadsCounted();
    PostgresIdempotencyStore instance = PostgresIdempotencyStore.builder(counted).build();

    CleanupResult run = instance.cleanup(Duration.ZERO, Duration.ofDays(30), 50);

    assertThat(run.recordsDeleted()).isEqualTo(300);
    assertThat(count("idem_key like 'old-%'")).isZero();
    assertThat(
            count(
                "state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')"
                    + " and body_dropped_at is null and response_body is not null"))
        .as("live records untouched")
        .isEqualTo(stuck);
    List<Long> reads = counted.bodyIndexReads;
    assertThat(reads).as("batches of the run").hasSize(300 / 50 + 1);
    assertThat(reads.get(0)).isGreaterThanOrEqualTo(stuck);
    assertThat(reads.subList(1, reads.size()))
        .as("index entries the body walk read in each later batch of the run")
        .allSatisfy(n -> assertThat(n).isLessThan(stuck / 4L));

    int before = reads.size();
    instance.cleanup(Duration.ZERO, Duration.ofDays(30), 50);
    assertThat(reads).hasSize(before + 1);
    assertThat(reads.get(before))
        .as("the next run starts over: what became droppable behind the position is found")
        .isGreaterThanOrEqualTo(stuck);
  }

  /**
   * The store's connections, with each cleanup batch run in one transaction that counts the entries
   * the body walk read from {@code idemkit_record_body_cleanup_ix} (the transaction's own
   * statistics, exact for it).
   */
  private final class ReadsCounted implements JdbcTransactions {
    final List<Long> bodyIndexReads = new ArrayList<>();
    private final JdbcTransactions plain = JdbcTransactions.of(dataSource);

    @Override
    public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
      return plain.inTransaction(work);
    }

    @Override
    public <T> T withConnection(ConnectionWork<T> work) throws Exception {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        try {
          long before = bodyIndexRead(c);
          T result = work.run(c);
          bodyIndexReads.add(bodyIndexRead(c) - before);
          c.commit();
          return result;
        } finally {
          c.rollback();
          c.setAutoCommit(true);
        }
      }
    }

    private long bodyIndexRead(Connection c) throws Exception {
      try (PreparedStatement ps =
              c.prepareStatement(
                  "select pg_stat_get_xact_tuples_returned("
                      + "cast('idemkit_record_body_cleanup_ix' as regclass))");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Test
  void bodyGoesAfterItsRetentionThenMetadataAndHistoryAfterTheirs() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-retained");
    ScopedKey other = ScopedKey.of(tenant, "create_payment", "k-other");
    assertThat(execute(id, "10.00", "{\"paid\":1}")).isInstanceOf(Outcome.Executed.class);
    sql(
        "insert into idemkit_record_history (tenant, operation, idem_key, event, state,"
            + " fencing_token, at) values ('"
            + tenant
            + "', 'create_payment', 'k-retained', 'FINISH', 'COMPLETED', 1, now()),"
            + " ('"
            + tenant
            + "', 'create_payment', 'k-other', 'FINISH', 'COMPLETED', 1, now())");
    Duration body = Duration.ofHours(2);
    Duration metadata = Duration.ofDays(7);

    clock.advance(TTL.plusHours(1));
    store.cleanup(body, metadata, 10);
    assertThat(store.find(id).orElseThrow().response()).as("inside the body retention").isNotNull();

    clock.advance(Duration.ofHours(2));
    assertThat(execute(other, "5.00", "{}")).isInstanceOf(Outcome.Executed.class);
    CleanupResult first = store.cleanup(body, metadata, 10);
    assertThat(first.bodiesDropped()).isEqualTo(1);
    assertThat(store.find(id).orElseThrow().response()).as("body dropped").isNull();
    assertThat(store.find(id).orElseThrow().fingerprint()).isEqualTo(command("10.00"));
    assertThat(historyCount("idem_key = 'k-retained'")).isEqualTo(1);

    clock.advance(metadata);
    CleanupResult second = store.cleanup(body, metadata, 10);
    assertThat(second.recordsDeleted()).isEqualTo(1);
    assertThat(store.find(id)).isEmpty();
    assertThat(historyCount("idem_key = 'k-retained'")).isZero();
    assertThat(historyCount("idem_key = 'k-other'")).as("another key's history").isEqualTo(1);
    assertThat(store.find(other).orElseThrow().response()).isNull();
  }

  @Test
  void aKeyReusedAfterItsWindowKeepsThePreviousOperationInHistory() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-reused");
    assertThat(execute(id, "10.00", "{\"first\":true}")).isInstanceOf(Outcome.Executed.class);
    Instant firstBegan = store.find(id).orElseThrow().createdAt();

    clock.advance(TTL.plusMinutes(1));
    Outcome second = execute(id, "99.00", "{\"second\":true}");

    assertThat(second).isInstanceOf(Outcome.Executed.class);
    assertThat(store.find(id).orElseThrow().fingerprint()).isEqualTo(command("99.00"));
    List<Map<String, Object>> history =
        history(id).stream().filter(h -> h.get("event").equals("REPLACED_EXPIRED")).toList();
    assertThat(history).as("the previous operation, once").hasSize(1);
    assertThat(history.get(0))
        .containsEntry("event", "REPLACED_EXPIRED")
        .containsEntry("state", "COMPLETED")
        .containsEntry("fingerprint", command("10.00").toString())
        .containsEntry("resource_id", "res-10.00")
        .containsEntry("response_status", 201);
    assertThat(((java.sql.Timestamp) history.get(0).get("began_at")).toInstant())
        .isEqualTo(firstBegan);
  }

  @Test
  void aKeyReusedAgainAndAgainLosesEarlierOperationsHistoryAfterTheMetadataRetention()
      throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-reused-often");
    ScopedKey other = ScopedKey.of(tenant, "create_payment", "k-reused-once");
    Duration metadata = Duration.ofMinutes(30);
    assertThat(execute(id, "1.00", "{}")).isInstanceOf(Outcome.Executed.class);
    clock.advance(TTL.plusMinutes(1));
    assertThat(execute(id, "2.00", "{}")).isInstanceOf(Outcome.Executed.class);
    assertThat(execute(other, "5.00", "{}")).isInstanceOf(Outcome.Executed.class);
    clock.advance(TTL.plusMinutes(1));
    assertThat(execute(other, "6.00", "{}")).isInstanceOf(Outcome.Executed.class);
    clock.advance(Duration.ofMinutes(10));
    assertThat(execute(id, "3.00", "{}")).isInstanceOf(Outcome.Executed.class);

    store.cleanup(Duration.ZERO, metadata, 10);

    // The record lives on (its key is in use), so its history never went with it: the first
    // operation's was kept for ever. It goes once its replacement is older than the retention.
    assertThat(store.find(id).orElseThrow().fingerprint()).isEqualTo(command("3.00"));
    List<Map<String, Object>> left = history(id);
    assertThat(left)
        .as("the first operation's replacement row gone; the second's rows and the current's kept")
        .extracting(h -> h.get("event"))
        .containsExactly("FINISH", "REPLACED_EXPIRED", "FINISH");
    assertThat(left.get(1)).containsEntry("fingerprint", command("2.00").toString());
    assertThat(left).noneMatch(h -> command("1.00").toString().equals(h.get("fingerprint")));
    assertThat(history(other))
        .as("a replacement 10 minutes old, inside the retention")
        .extracting(h -> h.get("event"))
        .containsExactly("REPLACED_EXPIRED", "FINISH");

    clock.advance(metadata);
    store.cleanup(Duration.ZERO, metadata, 10);
    assertThat(history(id)).extracting(h -> h.get("event")).containsExactly("FINISH");
    assertThat(history(other)).extracting(h -> h.get("event")).containsExactly("FINISH");
    assertThat(store.find(id)).isPresent();
  }

  @Test
  void manyInstancesDeleteReplacedHistoryWithoutWaitingOnEachOther() throws Exception {
    int keys = 2000;
    insertRecords("reused", keys, "COMPLETED", "+1 hour");
    // Each key: an operation replaced twice (both replacements past the retention), then the
    // current operation's row.
    sql(
        "insert into idemkit_record_history (tenant, operation, idem_key, event, state,"
            + " fencing_token, at)"
            + " select tenant, operation, idem_key, e.event, 'COMPLETED', e.n,"
            + "   now() - interval '3 days' + e.n * interval '1 minute'"
            + " from idemkit_record, (values (1, 'FINISH'), (2, 'REPLACED_EXPIRED'),"
            + "   (3, 'FINISH'), (4, 'REPLACED_EXPIRED'), (5, 'FINISH')) e(n, event)"
            + " where tenant = '"
            + tenant
            + "' order by idem_key, e.n");
    sql(
        "update idemkit_record_history set at = now() where tenant = '"
            + tenant
            + "' and fencing_token = 5");

    race(
        8,
        () -> {
          CleanupRun run = PostgresIdempotencyStore.create(dataSource).beginRun();
          for (int i = 0; i < 100; i++) {
            run.batch(Duration.ZERO, Duration.ofDays(1), 100);
          }
          return null;
        });

    assertThat(historyCount("fencing_token < 5")).as("earlier operations' history").isZero();
    assertThat(historyCount("fencing_token = 5")).as("current operations'").isEqualTo(keys);
    assertThat(count("true")).isEqualTo(keys);
  }

  @Test
  void recoveryBacksOffExponentiallyThenEscalatesOnce() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-unknown");
    leaveUnknown(id);
    Duration first = Duration.ofSeconds(10);
    assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);

    // In the recovery worker's order: an attempt that leaves the outcome unknown, then the backoff.
    List<Duration> waits = new ArrayList<>();
    for (int attempt = 1; attempt <= 3; attempt++) {
      assertThat(recoverStillUnknown(id)).isInstanceOf(Outcome.OutcomePending.class);
      Instant attemptedAt = clock.instant();
      assertThat(store.backOffRecovery(id, first, Duration.ofHours(1), 5))
          .isEqualTo(RecoveryBackoff.DEFERRED);
      Instant due = recoveryDue(id);
      waits.add(Duration.between(attemptedAt, due));
      clock.set(due.minusMillis(1));
      assertThat(needingRecovery()).doesNotContain(id);
      clock.set(due);
      assertThat(needingRecovery()).contains(id);
    }
    assertThat(waits)
        .as("backoff after the first recovery attempt, then twice as long each time")
        .containsExactly(first, first.multipliedBy(2), first.multipliedBy(4));

    assertThat(recoverStillUnknown(id)).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(store.find(id).orElseThrow().recoveryAttempts())
        .as("the first request's attempt and four recoveries")
        .isEqualTo(5);
    assertThat(store.backOffRecovery(id, first, Duration.ofHours(1), 5))
        .isEqualTo(RecoveryBackoff.ESCALATED);
    clock.advance(Duration.ofDays(1));
    assertThat(needingRecovery()).as("no automatic recovery after the limit").doesNotContain(id);
    assertThat(store.findEscalated(100)).extracting(r -> r.id()).contains(id);
    assertThat(store.backOffRecovery(id, first, Duration.ofHours(1), 5))
        .isEqualTo(RecoveryBackoff.ALREADY_ESCALATED);
    assertThat(history(id)).filteredOn(h -> h.get("event").equals("ESCALATED")).hasSize(1);
  }

  @Test
  void anEscalatedRecordStillCountsAsLiveForTheTenantsQuota() throws Exception {
    ScopedKey escalated = ScopedKey.of(tenant, "create_payment", "k-escalated");
    leaveUnknown(escalated);
    assertThat(recoverStillUnknown(escalated)).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(store.backOffRecovery(escalated, Duration.ofSeconds(1), Duration.ofSeconds(1), 2))
        .isEqualTo(RecoveryBackoff.ESCALATED);
    assertThat(recoveryDue(escalated)).as("no automatic recovery").isNull();
    Idempotency oneLive =
        Idempotency.create(
            store,
            IdempotencyConfig.builder()
                .lease(Duration.ofSeconds(30))
                .defaultTtl(TTL)
                .quotas(new dev.idemkit.Quotas(0, 1))
                .build());
    oneLive.syncQuotas(); // the store's count of live records, as the worker's exchange reads it
    ScopedKey next = ScopedKey.of(tenant, "create_payment", "k-next");

    Outcome refused =
        oneLive.execute(
            new IdempotentRequest(next, command("8.00"), TTL),
            charge((ctx, d) -> CallResult.unknown("unused")));

    assertThat(refused).isInstanceOf(Outcome.QuotaExceeded.class);
    assertThat(((Outcome.QuotaExceeded) refused).quota()).isEqualTo("live_records");
    assertThat(((Outcome.QuotaExceeded) refused).retryAfter())
        .as("the escalated record alone fills the place: it waits for an operator")
        .isEqualTo(Duration.ofSeconds(60));
    assertThat(store.find(next)).as("a refused key stores nothing").isEmpty();

    assertThat(
            store.resolve(
                escalated, OperatorResolution.applied("ch_again"), "admin:bob", "seen at provider"))
        .isTrue();
    idempotency.recover(
        escalated,
        charge(
            (ctx, d) -> {
              d.put("chargeId", ctx.operatorResolution().orElseThrow().externalReference());
              return CallResult.applied(d);
            }));
    assertThat(store.find(escalated).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
    Outcome admitted =
        oneLive.execute(new IdempotentRequest(next, command("8.00"), TTL), localSuccess());
    assertThat(admitted)
        .as("resolved and finished: its place is free")
        .isInstanceOf(Outcome.Executed.class);
  }

  @Test
  void anOperatorResolutionReachesTheLookupOnceWithWhoAndWhyInHistory() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-resolved");
    leaveUnknown(id);
    for (int i = 0; i < 2; i++) {
      store.backOffRecovery(id, Duration.ofSeconds(1), Duration.ofSeconds(1), 1);
    }
    assertThat(store.findEscalated(100)).extracting(r -> r.id()).contains(id);

    assertThat(
            store.resolve(
                id, OperatorResolution.applied("ch_123"), "admin:alice", "seen in dashboard"))
        .isTrue();

    assertThat(store.findEscalated(100)).extracting(r -> r.id()).doesNotContain(id);
    assertThat(needingRecovery()).contains(id);
    List<String> seen = new ArrayList<>();
    Optional<Outcome> outcome =
        idempotency.recover(
            id,
            charge(
                (ctx, d) -> {
                  OperatorResolution verdict = ctx.operatorResolution().orElseThrow();
                  seen.add(verdict.outcome() + ":" + verdict.externalReference());
                  d.put("chargeId", verdict.externalReference());
                  return CallResult.applied(d);
                }));

    assertThat(outcome).get().isInstanceOf(Outcome.Executed.class);
    assertThat(seen).containsExactly("APPLIED:ch_123");
    assertThat(store.find(id).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
    assertThat(history(id))
        .filteredOn(h -> h.get("event").equals("OPERATOR_RESOLVED_APPLIED"))
        .singleElement()
        .satisfies(
            h ->
                assertThat(h)
                    .containsEntry("actor", "admin:alice")
                    .containsEntry("reason", "seen in dashboard"));
    assertThat(store.resolve(id, OperatorResolution.notApplied(), "admin:alice", "again"))
        .as("a finished record takes no verdict")
        .isFalse();
  }

  /**
   * A local phase that failed after the charge until the last attempt leaves the record escalated
   * with no call pending: an operator can still resolve it (it would otherwise hold its place in
   * the tenant's quota for good), and the next recovery goes on from the charge.
   */
  @Test
  void aRecordEscalatedByALocalPhaseAfterTheChargeTakesAnOperatorsResolution() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-local-escalated");
    Idempotency oneAttempt =
        Idempotency.create(
            store,
            IdempotencyConfig.builder()
                .lease(Duration.ofSeconds(30))
                .defaultTtl(TTL)
                .recoverySchedule(
                    new dev.idemkit.RecoverySchedule(
                        Duration.ofSeconds(10), Duration.ofHours(1), 1))
                .build());
    AtomicInteger charges = new AtomicInteger();
    AtomicInteger receipts = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean broken =
        new java.util.concurrent.atomic.AtomicBoolean();
    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, d) -> {
                              charges.incrementAndGet();
                              return CallResult.applied(d);
                            })
                        .lookup(
                            (ctx, d) ->
                                charges.get() == 0
                                    ? CallResult.notApplied("no charge under this key")
                                    : CallResult.applied(d)))
            .external(
                "RECEIPT_SENT",
                call ->
                    call.beforeCall(
                            (ctx, d) -> {
                              if (broken.get()) {
                                throw new IllegalStateException("receipt constraint broken");
                              }
                              return dev.idemkit.Step.next(d);
                            })
                        .call(
                            (ctx, d) ->
                                receipts.incrementAndGet() == 1
                                    ? CallResult.notApplied("mail service busy")
                                    : CallResult.applied(d))
                        .farSideDeduplicatesByKey()) // the mail service keeps one mail per key
            .complete(
                (ctx, d) ->
                    OperationResult.success(
                        StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))));
    IdempotentRequest request = new IdempotentRequest(id, command("10.00"), TTL);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> oneAttempt.execute(request, op))
        .isInstanceOf(dev.idemkit.OperationFailedException.class);
    broken.set(true);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> oneAttempt.execute(request, op))
        .isInstanceOf(dev.idemkit.OperationFailedException.class);
    assertThat(store.find(id).orElseThrow().pendingExternal()).isNull();
    assertThat(store.findEscalated(100)).extracting(r -> r.id()).contains(id);

    broken.set(false);
    assertThat(store.resolve(id, OperatorResolution.notApplied(), "admin:alice", "bug fixed"))
        .isTrue();
    assertThat(store.findEscalated(100)).extracting(r -> r.id()).doesNotContain(id);
    assertThat(needingRecovery()).contains(id);
    assertThat(oneAttempt.recover(id, op)).get().isInstanceOf(Outcome.Executed.class);
    assertThat(store.find(id).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
    assertThat(charges).as("charged once").hasValue(1);
  }

  /**
   * Two operators resolve the same record: until recovery acts on the first resolution the store
   * takes no second one, whatever it says, and nothing of it reaches the record (it merged: the
   * later outcome won and an APPLIED reference stayed beside a NOT_APPLIED). Once the first was
   * acted on and the outcome is still unknown, a new resolution is taken, with no reference left of
   * the first.
   */
  @Test
  void aSecondResolutionBeforeTheFirstIsActedOnChangesNothing() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-resolved-twice");
    leaveUnknown(id);
    store.backOffRecovery(id, Duration.ofSeconds(1), Duration.ofSeconds(1), 1);
    assertThat(store.resolve(id, OperatorResolution.applied("ch_1"), "admin:alice", "dashboard"))
        .isTrue();

    assertThat(store.resolve(id, OperatorResolution.notApplied(), "admin:bob", "no charge"))
        .isFalse();
    assertThat(store.resolve(id, OperatorResolution.applied("ch_2"), "admin:bob", "other one"))
        .isFalse();
    assertThat(store.resolve(id, OperatorResolution.applied("ch_1"), "admin:alice", "again"))
        .as("the store takes no repeat either; the caller answers it as the first")
        .isFalse();
    assertThat(OperatorResolution.pendingIn(store.find(id).orElseThrow()))
        .contains(OperatorResolution.applied("ch_1"));
    assertThat(history(id))
        .filteredOn(h -> h.get("event").toString().startsWith("OPERATOR_RESOLVED"))
        .singleElement()
        .satisfies(h -> assertThat(h).containsEntry("actor", "admin:alice"));

    // Recovery acts on it and the outcome stays unknown: the record takes a new resolution.
    List<String> seen = new ArrayList<>();
    assertThat(
            idempotency.recover(
                id,
                charge(
                    (ctx, d) -> {
                      seen.add(ctx.operatorResolution().orElseThrow().externalReference());
                      return CallResult.unknown("still unsure");
                    })))
        .get()
        .isInstanceOf(Outcome.OutcomePending.class);
    assertThat(seen).containsExactly("ch_1");
    assertThat(OperatorResolution.pendingIn(store.find(id).orElseThrow())).isEmpty();
    assertThat(store.resolve(id, OperatorResolution.notApplied(), "admin:bob", "no charge"))
        .isTrue();
    assertThat(OperatorResolution.pendingIn(store.find(id).orElseThrow()))
        .contains(OperatorResolution.notApplied());
    assertThat(store.find(id).orElseThrow().recoveryData())
        .doesNotContainKey(OperatorResolution.REFERENCE_KEY);
  }

  // ---- helpers --------------------------------------------------------------------------------

  /**
   * What the gauge idempotency.in_progress.age.max reads: the oldest record not finished, whether
   * its recovery is due, waiting out its backoff, or escalated to an operator.
   */
  @Test
  void theOldestUnfinishedRecordIncludesRecordsInBackoffAndEscalated() throws Exception {
    assertThat(store.oldestUnfinishedSince()).isEmpty();
    ScopedKey escalated = ScopedKey.of(tenant, "create_payment", "k-oldest-escalated");
    leaveUnknown(escalated);
    Instant escalatedSince = store.find(escalated).orElseThrow().createdAt();
    clock.advance(Duration.ofSeconds(5));
    ScopedKey waiting = ScopedKey.of(tenant, "create_payment", "k-oldest-waiting");
    leaveUnknown(waiting);
    clock.advance(Duration.ofSeconds(5));
    execute(ScopedKey.of(tenant, "create_payment", "k-oldest-done"), "1.00", "{}");

    store.backOffRecovery(escalated, Duration.ofSeconds(1), Duration.ofSeconds(1), 1);
    store.backOffRecovery(waiting, Duration.ofMinutes(10), Duration.ofMinutes(10), 8);
    assertThat(store.findEscalated(100)).extracting(r -> r.id()).containsExactly(escalated);
    assertThat(needingRecovery()).as("neither is due now").isEmpty();

    assertThat(store.oldestUnfinishedSince()).contains(escalatedSince);

    store.resolve(escalated, OperatorResolution.notApplied(), "admin:alice", "no charge");
    idempotency.recover(escalated, charge((ctx, d) -> CallResult.applied(d)));
    assertThat(store.find(escalated).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);

    assertThat(store.oldestUnfinishedSince())
        .contains(store.find(waiting).orElseThrow().createdAt());
  }

  private long untilDone(Duration body, Duration metadata) {
    CleanupRun run = PostgresIdempotencyStore.create(dataSource).beginRun();
    long dropped = 0;
    CleanupResult r;
    do {
      r = run.batch(body, metadata, 100);
      dropped += r.bodiesDropped();
    } while (r.bodiesDropped() > 0);
    return dropped;
  }

  private long untilDeleted(Duration body, Duration metadata) {
    CleanupRun run = PostgresIdempotencyStore.create(dataSource).beginRun();
    long deleted = 0;
    CleanupResult r;
    do {
      r = run.batch(body, metadata, 100);
      deleted += r.recordsDeleted();
    } while (r.recordsDeleted() > 0);
    return deleted;
  }

  private Fingerprint command(String amount) {
    return Fingerprint.of(Map.of("amount", amount));
  }

  private Outcome execute(ScopedKey id, String amount, String body) {
    LocalOperation op =
        ctx ->
            OperationResult.success(
                StoredResponse.of(201, Map.of(), body.getBytes(StandardCharsets.UTF_8))
                    .withResourceId("res-" + amount));
    return idempotency.execute(new IdempotentRequest(id, command(amount), TTL), op);
  }

  private static LocalOperation localSuccess() {
    return ctx ->
        OperationResult.success(
            StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)));
  }

  private PhasedOperation<Map<String, String>> charge(
      PhasedOperation.Call<Map<String, String>> lookup) {
    return PhasedOperation.builder()
        .external(
            "CHARGED",
            call ->
                call.call(
                        (ctx, d) -> {
                          throw new IOException("connection reset after the request");
                        })
                    .lookup(lookup))
        .complete(
            (ctx, d) ->
                OperationResult.success(
                    StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))));
  }

  private void leaveUnknown(ScopedKey id) {
    Outcome outcome =
        idempotency.execute(
            new IdempotentRequest(id, command("7.00"), TTL),
            charge((ctx, d) -> CallResult.unknown("provider unreachable")));
    assertThat(outcome).isInstanceOf(Outcome.OutcomePending.class);
  }

  private Outcome recoverStillUnknown(ScopedKey id) {
    return idempotency
        .recover(id, charge((ctx, d) -> CallResult.unknown("provider unreachable")))
        .orElseThrow();
  }

  private Instant recoveryDue(ScopedKey id) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select recovery_due from idemkit_record"
                    + " where tenant = ? and operation = ? and idem_key = ?")) {
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        java.sql.Timestamp due = rs.getTimestamp(1);
        return due == null ? null : due.toInstant();
      }
    }
  }

  private List<ScopedKey> needingRecovery() {
    return store.findNeedingRecovery(10_000).stream().map(r -> r.id()).toList();
  }

  private void insertRecords(String prefix, int n, String state, String expiresIn) {
    sql(
        "insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,"
            + " fencing_token, locked_until, response_status, response_body, created_at,"
            + " updated_at, expires_at) select '"
            + tenant
            + "', 'create_payment', '"
            + prefix
            + "-' || g, 'v1:sha256:abc', '"
            + state
            + "', 1, now(), 201, convert_to('{\"body\":' || g || '}', 'UTF8'), now(), now(),"
            + " now() + interval '"
            + expiresIn
            + "' from generate_series(1, "
            + n
            + ") g");
  }

  private long count(String condition) throws Exception {
    return scalar(
        "select count(*) from idemkit_record where tenant = '" + tenant + "' and " + condition);
  }

  private long historyCount(String condition) throws Exception {
    return scalar(
        "select count(*) from idemkit_record_history where tenant = '"
            + tenant
            + "' and "
            + condition);
  }

  private List<Map<String, Object>> history(ScopedKey id) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select * from idemkit_record_history"
                    + " where tenant = ? and operation = ? and idem_key = ? order by id")) {
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      List<Map<String, Object>> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Map<String, Object> row = new java.util.HashMap<>();
          for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
            if (rs.getObject(i) != null) {
              row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
            }
          }
          rows.add(row);
        }
      }
      return rows;
    }
  }

  private long scalar(String sql) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void sql(String sql) {
    TestDatabase.execute(dataSource, sql);
  }

  private static <T> List<T> race(int threads, Callable<T> task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch ready = new CountDownLatch(threads);
      CountDownLatch go = new CountDownLatch(1);
      AtomicInteger started = new AtomicInteger();
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        futures.add(
            pool.submit(
                () -> {
                  started.incrementAndGet();
                  ready.countDown();
                  go.await();
                  return task.call();
                }));
      }
      ready.await();
      go.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get());
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }
}
