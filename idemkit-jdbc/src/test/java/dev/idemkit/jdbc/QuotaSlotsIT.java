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
import dev.idemkit.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The quotas' count on slots (schemas V14 to V16): concurrent new keys of one tenant hold different
 * slots instead of queueing on one row; with more concurrent new keys than a tenant's minute has
 * slots (16), each slot holds its share of the minute's quota, a key finds room in another slot or
 * waits for one, the live records' count goes exact near its limit, and the limits are admitted
 * exactly, neither more nor fewer.
 */
class QuotaSlotsIT {

  private static final Duration TTL = Duration.ofHours(1);

  private IdemkitDatabase db;
  private PostgresIdempotencyStore store;
  private final String tenant = "slots-" + UUID.randomUUID().toString().substring(0, 8);
  private final ExecutorService pool = Executors.newFixedThreadPool(48);

  @BeforeEach
  void setUp() {
    db = TestDatabase.freshSchema(40);
    store = PostgresIdempotencyStore.create(db.dataSource());
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    db.close();
  }

  @Test
  void concurrentNewKeysOfOneTenantAreCountedAtOnceNotOneAfterTheOther() throws Exception {
    // Eight transactions of one tenant count a new key each (idemkit_admit, as the store sends it)
    // and stay open: each must be counted while the others still hold their places, none waiting
    // for another's commit (with one row per minute, the second waited for the first's commit).
    int keys = 8;
    awayFromAMinutesEnd();
    admitAt("now", 1000, 200); // the tenant's slots exist from its first key on
    List<Connection> open = new ArrayList<>();
    try {
      for (int i = 0; i < keys; i++) {
        Connection c = db.dataSource().getConnection();
        open.add(c);
        c.setAutoCommit(false);
        try (var s = c.createStatement()) {
          s.execute("set local lock_timeout = '5s'");
        }
      }
      List<Boolean> counted =
          race(
              keys,
              new Callable<>() {
                private final AtomicInteger next = new AtomicInteger();

                @Override
                public Boolean call() throws Exception {
                  Connection c = open.get(next.getAndIncrement());
                  try (PreparedStatement ps =
                      c.prepareStatement("select idemkit_admit(statement_timestamp(), ?, ?, ?)")) {
                    ps.setString(1, tenant);
                    ps.setInt(2, 1000);
                    ps.setInt(3, 200);
                    ps.execute();
                    return true;
                  }
                }
              });
      assertThat(counted).hasSize(keys).containsOnly(true);
      for (Connection c : open) {
        c.commit();
      }
    } finally {
      for (Connection c : open) {
        c.close();
      }
    }
    assertThat(slotKeys()).as("each open transaction counted its key").isEqualTo(keys + 1);
  }

  /**
   * V15: a connection counts in its own slot ({@code pg_backend_pid() % n}) while that slot is free
   * and has room, one row read by its key; held by another transaction, or full, the key is counted
   * in another slot at once, without waiting for the holder.
   */
  @Test
  void aConnectionCountsInItsOwnSlotAndInAnotherWhenItsOwnIsHeldOrFull() throws Exception {
    awayFromAMinutesEnd();
    try (Connection mine = db.dataSource().getConnection();
        Connection other = db.dataSource().getConnection()) {
      int own = (int) (pid(mine) % 16);
      makeSlots(mine, tenant); // a tenant's first key makes them and takes any free one
      for (int i = 0; i < 3; i++) {
        admitOn(mine, tenant, 1600, 200);
      }
      assertThat(keysBySlot(tenant))
          .as("three keys, all in the connection's own slot")
          .containsEntry(own, 3L);
      assertThat(slotKeys()).isEqualTo(3);

      // Another transaction holds the own slot: the next key goes elsewhere, without waiting.
      other.setAutoCommit(false);
      try (PreparedStatement lock =
          other.prepareStatement(
              "select 1 from idemkit_tenant_key_slot where tenant = ? and slot = ? for update")) {
        lock.setString(1, tenant);
        lock.setInt(2, own);
        lock.executeQuery().close();
      }
      try (var s = mine.createStatement()) {
        s.execute("set lock_timeout = '2s'");
      }
      admitOn(mine, tenant, 1600, 200);
      other.rollback();
      assertThat(keysBySlot(tenant).get(own)).as("the held slot kept its count").isEqualTo(3L);
      assertThat(slotKeys()).isEqualTo(4);
    }
    // A full own slot (limit 32: two keys a slot) sends the key on to one with room.
    String full = "full-" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection mine = db.dataSource().getConnection()) {
      int own = (int) (pid(mine) % 16);
      makeSlots(mine, full);
      for (int i = 0; i < 3; i++) {
        admitOn(mine, full, 32, 0);
      }
      Map<Integer, Long> bySlot = keysBySlot(full);
      assertThat(bySlot).containsEntry(own, 2L).hasSize(2);
      assertThat(bySlot.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(3);
    }
  }

  /**
   * V16: many new keys of a fresh tenant, more than its quota has room for, counted at once, each
   * transaction committing up to 4 ms after its count (the rest of its work), fresh tenant after
   * fresh tenant; with a limit of new keys, and with a limit of live records (each key's record
   * live, as a phased operation's is, so most counts are near that limit). Each key is admitted or
   * refused by the quota, exactly the limit admitted, and none fails: V15 deadlocked with the limit
   * of new keys (a key waiting for a slot while holding slots it had found full, which other
   * waiting keys waited for), and a first version of V16 with the live limit (a key waiting for a
   * slot taken in a subtransaction went on to wait for that key's whole transaction).
   */
  @Test
  void keysWaitingForSlotsAtOnceAreAdmittedOrRefusedNeverDeadlocked() throws Exception {
    awayFromAMinutesEnd();
    Map<String, Integer> failures = new java.util.concurrent.ConcurrentHashMap<>();
    List<String> wrongCounts = new java.util.concurrent.CopyOnWriteArrayList<>();
    record Flood(int keys, int newKeys, int live, int tenants) {
      int admitted() {
        return live > 0 ? live : newKeys;
      }
    }
    for (Flood flood :
        List.of(new Flood(24, 5, 0, 60), new Flood(36, 20, 0, 30), new Flood(32, 1000, 12, 30))) {
      List<Connection> open = new ArrayList<>();
      try {
        for (int i = 0; i < flood.keys(); i++) {
          open.add(db.dataSource().getConnection());
        }
        for (int t = 0; t < flood.tenants(); t++) {
          String fresh = "flood-" + UUID.randomUUID().toString().substring(0, 8);
          AtomicInteger next = new AtomicInteger();
          List<Boolean> admitted =
              race(
                  flood.keys(),
                  () -> {
                    Connection c = open.get(next.getAndIncrement());
                    c.setAutoCommit(false);
                    try (PreparedStatement record =
                            c.prepareStatement(
                                """
                                insert into idemkit_record (tenant, operation, idem_key,
                                    fingerprint, state, fencing_token, locked_until, created_at,
                                    updated_at, expires_at, recovery_due)
                                select ?, 'create_payment', ?, 'v1:sha256:' || repeat('0', 64),
                                    'IN_PROGRESS', 1, t + interval '30 seconds', t, t,
                                    t + interval '1 hour', t + interval '30 seconds'
                                from (select statement_timestamp() as t) now
                                """);
                        PreparedStatement ps =
                            c.prepareStatement(
                                "select idemkit_admit(statement_timestamp(), ?, ?, ?)")) {
                      if (flood.live() > 0) {
                        record.setString(1, fresh);
                        record.setString(2, "k-" + UUID.randomUUID());
                        record.executeUpdate();
                      }
                      ps.setString(1, fresh);
                      ps.setInt(2, flood.newKeys());
                      ps.setInt(3, flood.live());
                      ps.execute();
                      Thread.sleep(ThreadLocalRandom.current().nextInt(5)); // the rest of its work
                      c.commit();
                      return true;
                    } catch (java.sql.SQLException e) {
                      c.rollback();
                      if (!"IK429".equals(e.getSQLState())) {
                        failures.merge(e.getSQLState(), 1, Integer::sum);
                      }
                      return false;
                    } finally {
                      c.setAutoCommit(true);
                    }
                  });
          long counted = admitted.stream().filter(a -> a).count();
          if (counted != flood.admitted()) {
            wrongCounts.add(flood + ": " + counted + " admitted");
          }
        }
      } finally {
        for (Connection c : open) {
          c.close();
        }
      }
    }
    assertThat(failures).as("failures other than the quota's refusal, by SQLSTATE").isEmpty();
    assertThat(wrongCounts).as("tenants admitted other than their limit").isEmpty();
  }

  /**
   * A phased operation whose external call stays under way, its record live, until {@code release}
   * (counted in {@code calls} when it begins); up to 24 of them start their local phase together.
   */
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

  /** Counts a new key of {@code tenant} on {@code c}, in its transaction (committed if none). */
  private static void admitOn(Connection c, String tenant, int newKeys, int live) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement("select idemkit_admit(statement_timestamp(), ?, ?, ?)")) {
      ps.setString(1, tenant);
      ps.setInt(2, newKeys);
      ps.setInt(3, live);
      ps.execute();
    }
  }

  private static void makeSlots(Connection c, String tenant) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "insert into idemkit_tenant_key_slot (tenant, slot, minute, keys)"
                + " select ?, g, date_trunc('minute', statement_timestamp()), 0"
                + " from generate_series(0, 15) g")) {
      ps.setString(1, tenant);
      ps.executeUpdate();
    }
  }

  private static long pid(Connection c) throws Exception {
    try (var s = c.createStatement();
        ResultSet rs = s.executeQuery("select pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private Map<Integer, Long> keysBySlot(String tenant) throws Exception {
    Map<Integer, Long> bySlot = new java.util.HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select slot, keys from idemkit_tenant_key_slot where tenant = ? and keys > 0")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          bySlot.put(rs.getInt(1), rs.getLong(2));
        }
      }
    }
    return bySlot;
  }

  @Test
  void eachMinuteHasTheWholeQuotaAndIdleSlotsGoWithCleanup() throws Exception {
    for (int i = 0; i < 32; i++) {
      admitAt("2026-03-01T12:00:10Z", 32, 0);
    }
    assertThat(refusalAt("2026-03-01T12:00:50Z", 32, 0))
        .as("the minute's 33rd new key")
        .contains("quota=new_keys limit=32 retry_after=10");
    for (int i = 0; i < 32; i++) {
      admitAt("2026-03-01T12:01:05Z", 32, 0); // the next minute starts empty
    }
    assertThat(refusalAt("2026-03-01T12:01:06Z", 32, 0)).contains("quota=new_keys limit=32");
    assertThat(slotKeys()).as("the slots hold the current minute's keys").isEqualTo(32);

    cleanupAt("2026-03-01T13:00:30Z");
    assertThat(slotKeys()).as("slots idle for less than an hour stay").isEqualTo(32);
    cleanupAt("2026-03-01T13:02:30Z");
    assertThat(count("select count(*) from idemkit_tenant_key_slot where tenant = ?"))
        .as("slots idle for an hour are deleted")
        .isZero();
    admitAt("2026-03-01T13:02:40Z", 32, 0);
    assertThat(slotKeys()).isEqualTo(1);
  }

  @Test
  void aFloodOfNewKeysLargerThanTheSlotsGetsExactlyTheMinutesQuota() throws Exception {
    Idempotency limited = limited(new Quotas(50, 0));
    awayFromAMinutesEnd();
    LocalOperation op =
        ctx ->
            OperationResult.success(
                StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)));

    List<Outcome> outcomes =
        race(
            80,
            () ->
                limited.execute(
                    new IdempotentRequest(key("k-" + UUID.randomUUID()), command(), TTL), op));

    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(50);
    assertThat(outcomes)
        .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
        .hasSize(30)
        .allSatisfy(o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("new_keys"));
    assertThat(records()).as("a refused key leaves no record").isEqualTo(50);
    assertThat(slotKeys()).as("the slots count what was admitted").isEqualTo(50);
  }

  @Test
  void aFloodOfPhasedOperationsLargerThanTheSlotsGetsExactlyTheLiveRecordsQuota() throws Exception {
    Idempotency limited = limited(new Quotas(0, 20));
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    PhasedOperation<Map<String, String>> slowCall = callHeldUntil(release, calls);
    AtomicInteger answered = new AtomicInteger();
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
    int callsWhileFull = calls.get();
    release.countDown();
    List<Outcome> outcomes = flood.get(90, TimeUnit.SECONDS);

    assertThat(callsWhileFull).as("live at once").isEqualTo(20);
    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(20);
    assertThat(outcomes)
        .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
        .hasSize(20)
        .allSatisfy(o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("live_records"));
    assertThat(records()).as("a refused key leaves no record").isEqualTo(20);
  }

  @Test
  void newKeysAdmittedInTwoMinutesAtOnceGetExactlyTheLiveRecordsQuota() throws Exception {
    // Two instances of one tenant admit new keys at once on either side of a minute's end: one
    // store's clock reads the minute's last second (and moves into the next minute halfway), the
    // other's the next minute's first. The slots (V14) last counted in the earlier minute, so keys
    // of the later minute start the slots over while keys of the earlier one still count in them;
    // the live records' quota (20) must hold across both.
    MutableClock lateInTheMinute = new MutableClock(Instant.parse("2026-03-01T12:00:59.500Z"));
    MutableClock nextMinute = new MutableClock(Instant.parse("2026-03-01T12:01:00.250Z"));
    Quotas quotas = new Quotas(1000, 20);
    Idempotency first = limited(storeOn(lateInTheMinute), quotas);
    Idempotency second = limited(storeOn(nextMinute), quotas);
    for (int i = 0; i < 5; i++) { // the slots exist, counting keys of the earlier minute
      admitAt("2026-03-01T12:00:30Z", 1000, 20);
    }
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger started = new AtomicInteger();
    PhasedOperation<Map<String, String>> slowCall = callHeldUntil(release, calls);
    AtomicInteger answered = new AtomicInteger();
    Future<List<Outcome>> flood =
        pool.submit(
            () ->
                race(
                    40,
                    () -> {
                      boolean earlier = started.getAndIncrement() % 2 == 0;
                      Outcome o =
                          (earlier ? first : second)
                              .execute(
                                  new IdempotentRequest(
                                      key("k-" + UUID.randomUUID()), command(), TTL),
                                  slowCall);
                      answered.incrementAndGet();
                      return o;
                    }));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    boolean moved = false;
    while (answered.get() < 20 && System.nanoTime() < deadline) {
      if (!moved && calls.get() + answered.get() >= 10) {
        lateInTheMinute.set(Instant.parse("2026-03-01T12:01:00.100Z")); // its minute ends too
        moved = true;
      }
      Thread.sleep(10);
    }
    int callsWhileFull = calls.get();
    long liveWhileFull =
        count("select count(*) from idemkit_record where tenant = ? and recovery_due is not null");
    release.countDown();
    List<Outcome> outcomes = flood.get(90, TimeUnit.SECONDS);

    assertThat(liveWhileFull).as("live records of the tenant at once").isEqualTo(20);
    assertThat(callsWhileFull).as("calls under way at once").isEqualTo(20);
    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(20);
    assertThat(outcomes)
        .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
        .hasSize(20)
        .allSatisfy(o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("live_records"));
    assertThat(records()).as("a refused key leaves no record").isEqualTo(20);
  }

  @Test
  void theNextMinutesFirstKeysCountTheKeysStillBeingAdmittedInThePreviousOne() throws Exception {
    // 16 new keys of the minute's last second are counted (each holding its slot: every slot of
    // the tenant) and their transactions stay open, their live records not committed yet. The
    // next minute's keys begin: they cannot see those records, so they must not be counted
    // beside them in slots of their own minute; they wait for the slots, then count what was
    // committed, exactly: with a live limit of 20, 4 of 8 are admitted.
    String earlier = "2026-03-01T12:00:59.500Z";
    String later = "2026-03-01T12:01:00.500Z";
    admitAt(earlier, 1000, 20); // the tenant's slots exist, last counted in the earlier minute
    List<Connection> open = new ArrayList<>();
    try {
      for (int i = 0; i < 16; i++) {
        Connection c = db.dataSource().getConnection();
        open.add(c);
        c.setAutoCommit(false);
        try (var s = c.createStatement()) {
          s.execute("set local lock_timeout = '10s'");
        }
        assertThat(liveKeyAt(c, earlier)).as("key %d of the earlier minute", i).isNull();
      }
      AtomicInteger counting = new AtomicInteger();
      Future<List<String>> nextMinute =
          pool.submit(
              () ->
                  race(
                      8,
                      () -> {
                        try (Connection c = db.dataSource().getConnection()) {
                          c.setAutoCommit(false);
                          try (var s = c.createStatement()) {
                            s.execute("set local application_name = 'quota-next-minute'");
                            s.execute("set local lock_timeout = '30s'");
                          }
                          counting.incrementAndGet();
                          String refusal = liveKeyAt(c, later);
                          if (refusal == null) {
                            c.commit();
                          } else {
                            c.rollback();
                          }
                          return refusal;
                        }
                      }));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (waitingForASlot() < 8 && System.nanoTime() < deadline && !nextMinute.isDone()) {
        Thread.sleep(10);
      }
      assertThat(nextMinute.isDone())
          .as("a key of the next minute was decided while every slot was held")
          .isFalse();
      assertThat(waitingForASlot()).as("keys of the next minute waiting for a slot").isEqualTo(8);
      for (Connection c : open) {
        c.commit();
      }
      List<String> refusals = nextMinute.get(60, TimeUnit.SECONDS);

      assertThat(refusals).filteredOn(r -> r == null).as("admitted in the next minute").hasSize(4);
      assertThat(refusals)
          .filteredOn(r -> r != null)
          .hasSize(4)
          .allSatisfy(r -> assertThat(r).contains("quota=live_records limit=20"));
      assertThat(count("select count(*) from idemkit_record where tenant = ?"))
          .as("live records of the tenant")
          .isEqualTo(20);
    } finally {
      for (Connection c : open) {
        c.close();
      }
    }
  }

  /**
   * What the store's claim transaction of a phased operation does before its commit: the record,
   * live (a recovery point set), then the count of the new key ({@code idemkit_admit}, new keys
   * 1000 a minute, live records 20) at {@code at}. The refusal's message, or null if admitted.
   */
  private String liveKeyAt(Connection c, String at) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            """
            insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
                fencing_token, locked_until, created_at, updated_at, expires_at, recovery_due)
            select ?, 'create_payment', ?, 'v1:sha256:' || repeat('0', 64), 'IN_PROGRESS', 1,
                t + interval '30 seconds', t, t, t + interval '1 hour', t + interval '30 seconds'
            from (select cast(? as timestamptz) as t) now
            """)) {
      ps.setString(1, tenant);
      ps.setString(2, "k-" + UUID.randomUUID());
      ps.setString(3, at);
      ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement("select idemkit_admit(cast(? as timestamptz), ?, 1000, 20)")) {
      ps.setString(1, at);
      ps.setString(2, tenant);
      ps.execute();
      return null;
    } catch (java.sql.SQLException e) {
      if (!"IK429".equals(e.getSQLState())) {
        throw e;
      }
      return e.getMessage();
    }
  }

  /**
   * Transactions of the next minute's keys still in their count: waiting for a slot another one
   * holds (V16: looking again every few milliseconds, or waiting for the slots' locks near the live
   * limit).
   */
  private long waitingForASlot() throws Exception {
    return count(
        "select count(*) + 0 * length(?) from pg_stat_activity"
            + " where application_name = 'quota-next-minute' and state = 'active'"
            + " and query like 'select idemkit_admit(%'");
  }

  private PostgresIdempotencyStore storeOn(java.time.Clock clock) {
    return PostgresIdempotencyStore.builder(JdbcTransactions.of(db.dataSource()))
        .clock(clock)
        .build();
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

  private Idempotency limited(Quotas quotas) {
    return Idempotency.create(
        store,
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
        .clock(java.time.Clock.fixed(java.time.Instant.parse(at), java.time.ZoneOffset.UTC))
        .build()
        .cleanup(Duration.ofDays(7), 100);
  }

  /** Counts a new key of the tenant at {@code at} ("now": the database's time) and commits it. */
  private void admitAt(String at, int newKeys, int live) throws Exception {
    String refusal = refusalAt(at, newKeys, live);
    assertThat(refusal).as("admitted at " + at).isNull();
  }

  private String refusalAt(String at, int newKeys, int live) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select idemkit_admit(coalesce(cast(? as timestamptz), statement_timestamp()), ?, ?, ?)")) {
      ps.setString(1, "now".equals(at) ? null : at);
      ps.setString(2, tenant);
      ps.setInt(3, newKeys);
      ps.setInt(4, live);
      ps.execute();
      return null;
    } catch (java.sql.SQLException e) {
      if (!"IK429".equals(e.getSQLState())) {
        throw e;
      }
      return e.getMessage();
    }
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

  private long slotKeys() throws Exception {
    return count("select coalesce(sum(keys), 0) from idemkit_tenant_key_slot where tenant = ?");
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
