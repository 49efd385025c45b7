package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.Quotas;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The quotas decided in memory and shared through the database in the background (schema V17,
 * {@link PostgresQuotaSync}). Floods on one instance get exactly the limits. Two instances, each on
 * a pool of its own, admit within the bound docs/contract.md states, and refuse beyond the limit
 * once they have exchanged their counts.
 */
class QuotaSharingIT {

  private static final Duration TTL = Duration.ofHours(1);

  private IdemkitDatabase db;
  private IdemkitDatabase otherPool;
  private PostgresIdempotencyStore store;
  private final String tenant = "share-" + UUID.randomUUID().toString().substring(0, 8);
  private final ExecutorService pool = Executors.newFixedThreadPool(64);

  @BeforeEach
  void setUp() throws Exception {
    db = TestDatabase.freshSchema(40);
    store = PostgresIdempotencyStore.create(db.dataSource());
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    if (otherPool != null) {
      otherPool.close();
    }
    db.close();
  }

  @Test
  void aFloodOfNewKeysOnOneInstanceGetsExactlyTheMinutesQuotaWithoutAQuotaStatement()
      throws Exception {
    Idempotency limited = limited(store, new Quotas(50, 0));
    limited.syncQuotas();
    awayFromAMinutesEnd();

    List<Outcome> outcomes =
        race(
            80,
            () ->
                limited.execute(
                    new IdempotentRequest(key("k-" + UUID.randomUUID()), command(), TTL), local()));

    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(50);
    assertThat(outcomes)
        .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
        .hasSize(30)
        .allSatisfy(o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("new_keys"));
    assertThat(records()).as("a refused key leaves no record").isEqualTo(50);
    assertThat(sharedKeys()).as("no request wrote a count: only the exchange does").isZero();
    limited.syncQuotas();
    assertThat(sharedKeys()).as("the exchange wrote this instance's count").isEqualTo(50);
  }

  @Test
  void aFloodOfPhasedOperationsOnOneInstanceGetsExactlyTheLiveRecordsQuota() throws Exception {
    Idempotency limited = limited(store, new Quotas(0, 20));
    limited.syncQuotas();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    PhasedOperation<Map<String, String>> slowCall = callHeldUntil(release, calls);
    AtomicInteger answered = new AtomicInteger();
    AtomicBoolean syncing = new AtomicBoolean(true);
    // Exchanges run meanwhile, as the worker's would: the count must neither lose nor double
    // the operations it meets half committed.
    Future<?> worker = pool.submit(() -> syncEvery(limited, Duration.ofMillis(50), syncing, null));
    Future<List<Outcome>> flood =
        pool.submit(
            () ->
                race(
                    40,
                    () -> {
                      Outcome o =
                          limited.execute(
                              new IdempotentRequest(key("k-" + UUID.randomUUID()), command(), TTL),
                              slowCall);
                      answered.incrementAndGet();
                      return o;
                    }));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (answered.get() < 20 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    Thread.sleep(200); // a few exchanges while the tenant is full
    ScopedKey late = key("k-late");
    Outcome lateOutcome = limited.execute(new IdempotentRequest(late, command(), TTL), slowCall);
    int callsWhileFull = calls.get();
    release.countDown();
    List<Outcome> outcomes = flood.get(90, TimeUnit.SECONDS);
    syncing.set(false);
    worker.get(10, TimeUnit.SECONDS);

    assertThat(callsWhileFull).as("live at once").isEqualTo(20);
    assertThat(lateOutcome)
        .as("still full after exchanges")
        .isInstanceOf(Outcome.QuotaExceeded.class);
    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(20);
    assertThat(outcomes)
        .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
        .hasSize(20)
        .allSatisfy(o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("live_records"));
    assertThat(records()).as("a refused key leaves no record").isEqualTo(20);
  }

  /**
   * Two instances on separate pools, 24 threads each released together, each thread claiming new
   * keys of one tenant (one each 20 ms at most, so that the limit is reached over several sync
   * intervals) until told to stop, while each instance's worker exchanges every 100 ms. The stated
   * bound: the tenant's new keys in the minute are at most the limit plus what the other instance
   * admitted in two sync intervals (plus an exchange's duration). Measured exactly: the most
   * admissions either instance made in any such window. Afterwards, once each has exchanged, both
   * refuse new keys.
   */
  @Test
  void twoInstancesRacingAdmitWithinTheStatedBoundAndRefuseBeyondTheLimitAfterAnExchange()
      throws Exception {
    otherPool = secondPool(40);
    int limit = 600;
    Duration interval = Duration.ofMillis(100);
    Idempotency a = limited(store, new Quotas(limit, 0));
    Idempotency b =
        limited(PostgresIdempotencyStore.create(otherPool.dataSource()), new Quotas(limit, 0));
    for (int i = 0; i < 5; i++) { // warm: the exchange's duration is a term of the bound
      a.syncQuotas();
      b.syncQuotas();
    }
    awayFromAMinutesEnd();
    AtomicBoolean syncing = new AtomicBoolean(true);
    AtomicLong longestExchange = new AtomicLong();
    Future<?> workerA = pool.submit(() -> syncEvery(a, interval, syncing, longestExchange));
    Future<?> workerB = pool.submit(() -> syncEvery(b, interval, syncing, longestExchange));
    List<Long> admittedAtA = Collections.synchronizedList(new ArrayList<>());
    List<Long> admittedAtB = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean flooding = new AtomicBoolean(true);
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger thread = new AtomicInteger();
    Future<List<Integer>> flood =
        pool.submit(
            () ->
                race(
                    48,
                    () -> {
                      boolean onA = thread.getAndIncrement() % 2 == 0;
                      Idempotency instance = onA ? a : b;
                      int mine = 0;
                      while (flooding.get()) {
                        Outcome o =
                            instance.execute(
                                new IdempotentRequest(
                                    key("k-" + UUID.randomUUID()), command(), TTL),
                                local());
                        Thread.sleep(20); // paced: the limit is reached over several intervals
                        if (o instanceof Outcome.Executed) {
                          (onA ? admittedAtA : admittedAtB).add(System.nanoTime());
                          mine++;
                        } else {
                          assertThat(o).isInstanceOf(Outcome.QuotaExceeded.class);
                          refused.incrementAndGet();
                        }
                      }
                      return mine;
                    }));
    Thread.sleep(2_000);
    flooding.set(false);
    int admitted = flood.get(60, TimeUnit.SECONDS).stream().mapToInt(Integer::intValue).sum();
    syncing.set(false);
    workerA.get(10, TimeUnit.SECONDS);
    workerB.get(10, TimeUnit.SECONDS);

    long window = 2 * interval.toNanos() + longestExchange.get();
    int overshootAllowed =
        Math.max(mostWithin(admittedAtA, window), mostWithin(admittedAtB, window));
    System.out.printf(
        "QuotaSharingIT: limit=%d admitted=%d (a=%d b=%d) refused=%d bound=%d"
            + " (other instance's most in %d ms)%n",
        limit,
        admitted,
        admittedAtA.size(),
        admittedAtB.size(),
        refused.get(),
        limit + overshootAllowed,
        TimeUnit.NANOSECONDS.toMillis(window));
    assertThat(refused.get()).as("the flood reached the limit").isPositive();
    assertThat(records()).isEqualTo(admitted);
    assertThat(admitted)
        .as("never fewer than the limit: each instance refuses only what it knows is over it")
        .isGreaterThanOrEqualTo(limit);
    assertThat(admitted)
        .as("within the limit plus the other instance's admissions in two sync intervals")
        .isLessThanOrEqualTo(limit + overshootAllowed);

    a.syncQuotas();
    b.syncQuotas();
    a.syncQuotas();
    for (Idempotency instance : List.of(a, b)) {
      assertThat(
              instance.execute(
                  new IdempotentRequest(key("k-after-" + UUID.randomUUID()), command(), TTL),
                  local()))
          .as("after an exchange every instance refuses new keys beyond the limit")
          .isInstanceOf(Outcome.QuotaExceeded.class);
    }
  }

  @Test
  void countsOfMinutesOverAnHourOldGoWithCleanup() throws Exception {
    Idempotency at12 =
        limited(
            PostgresIdempotencyStore.builder(JdbcTransactions.of(db.dataSource()))
                .clock(Clock.fixed(Instant.parse("2026-03-01T12:00:10Z"), ZoneOffset.UTC))
                .build(),
            new Quotas(10, 0));
    at12.syncQuotas();
    for (int i = 0; i < 3; i++) {
      at12.execute(new IdempotentRequest(key("k-" + i), command(), TTL), local());
    }
    at12.syncQuotas();
    assertThat(sharedKeys()).isEqualTo(3);
    cleanupAt("2026-03-01T12:59:30Z");
    assertThat(sharedKeys()).as("counts of the last hour stay").isEqualTo(3);
    cleanupAt("2026-03-01T13:01:30Z");
    assertThat(sharedKeys()).as("counts over an hour old are deleted").isZero();
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** What a worker does: an exchange every {@code interval} until told to stop. */
  private static Void syncEvery(
      Idempotency instance, Duration interval, AtomicBoolean syncing, AtomicLong longest)
      throws InterruptedException {
    while (syncing.get()) {
      long began = System.nanoTime();
      instance.syncQuotas();
      if (longest != null) {
        longest.accumulateAndGet(System.nanoTime() - began, Math::max);
      }
      Thread.sleep(interval.toMillis());
    }
    return null;
  }

  /** The most of {@code times} (nanoTime) within any window of {@code window} nanoseconds. */
  private static int mostWithin(List<Long> times, long window) {
    List<Long> sorted = new ArrayList<>(times);
    Collections.sort(sorted);
    int most = 0;
    int first = 0;
    for (int last = 0; last < sorted.size(); last++) {
      while (sorted.get(last) - sorted.get(first) > window) {
        first++;
      }
      most = Math.max(most, last - first + 1);
    }
    return most;
  }

  /** A second pool of its own on the same database and schema: another instance. */
  private IdemkitDatabase secondPool(int size) throws Exception {
    String url;
    try (Connection c = db.dataSource().getConnection()) {
      url = c.getMetaData().getURL();
    }
    return TestDatabase.anotherPool(url, size);
  }

  private static LocalOperation local() {
    return ctx ->
        OperationResult.success(
            StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)));
  }

  private static PhasedOperation<Map<String, String>> callHeldUntil(
      CountDownLatch release, AtomicInteger calls) {
    CyclicBarrier together = new CyclicBarrier(24);
    return PhasedOperation.builder()
        .local(
            "CREATED",
            (ctx, d) -> {
              try {
                together.await(2, TimeUnit.SECONDS);
              } catch (Exception lateOrAlone) {
                // fewer at once here: they race all the same
              }
              return dev.idemkit.Step.next(d);
            })
        .external(
            "CHARGED",
            call ->
                call.call(
                        (ctx, d) -> {
                          calls.incrementAndGet();
                          release.await(60, TimeUnit.SECONDS); // live until released
                          return CallResult.applied(d);
                        })
                    .farSideDeduplicatesByKey())
        .complete(
            (ctx, d) ->
                OperationResult.success(
                    StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))));
  }

  private Idempotency limited(PostgresIdempotencyStore on, Quotas quotas) {
    return Idempotency.create(
        on,
        IdempotencyConfig.builder()
            .lease(Duration.ofSeconds(30))
            .defaultTtl(TTL)
            .quotas(quotas)
            .build());
  }

  private <T> List<T> race(int threads, Callable<T> task) throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    List<Future<T>> futures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      futures.add(
          pool.submit(
              () -> {
                start.await();
                return task.call();
              }));
    }
    start.countDown();
    List<T> results = new ArrayList<>();
    for (Future<T> f : futures) {
      results.add(f.get(90, TimeUnit.SECONDS));
    }
    return results;
  }

  private ScopedKey key(String key) {
    return ScopedKey.of(tenant, "create_payment", key);
  }

  private static Fingerprint command() {
    return Fingerprint.of(Map.of("amount", "10.00"));
  }

  private void cleanupAt(String at) {
    PostgresIdempotencyStore.builder(JdbcTransactions.of(db.dataSource()))
        .clock(Clock.fixed(Instant.parse(at), ZoneOffset.UTC))
        .build()
        .cleanup(Duration.ofDays(7), 100);
  }

  /** Waits until the database's minute has 15 s or more to run, so a race stays in one minute. */
  private void awayFromAMinutesEnd() throws Exception {
    while (count(
            "select cast(extract(second from statement_timestamp()) as bigint) + 0 * length(?)")
        > 45) {
      Thread.sleep(1000);
    }
  }

  private long records() throws Exception {
    return count("select count(*) from idemkit_record where tenant = ?");
  }

  private long sharedKeys() throws Exception {
    return count("select coalesce(sum(keys), 0) from idemkit_quota_new_keys where tenant = ?");
  }

  private long count(String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
