package dev.idemkit.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.DataProtection;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresDataKeyStore;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * The store benchmark: a realistic single-transaction business write (a payment row and its outbox
 * row) done bare, and the same wrapped by Idemkit (the same rows, then the insert of the finished
 * record sent with the commit), on one pool with the same number of workers; then replays of
 * completed keys. Rounds alternate the variants so drift in the machine hits them alike.
 *
 * <p>A third variant, {@code sql}, sends exactly the statements the wrapped variant sends, the same
 * two inserts and the store's insert of the finished record with the commit, through plain JDBC
 * with no engine and no store: {@code engine_vs_sql} (wrapped / sql) is then what the engine and
 * the store's Java cost beyond their SQL, and sql / bare what the SQL itself costs. A fourth,
 * {@code claim-first}, is the wrapped operation run with {@code LocalOperation.claimingFirst}.
 *
 * <p>Then the accounting: each variant alone, on one connection, for {@value #ACCOUNTED} requests:
 * the round trips it made (counted by the driver's socket, {@link RoundTripCounter}), the record
 * rows it wrote (inserts, updates and deletes of {@code idemkit_record} and {@code
 * idemkit_record_history} in {@code pg_stat_user_tables}) and the WAL it generated ({@code
 * pg_current_wal_lsn()}), per request.
 *
 * <p>Arguments: {@code --seconds N} per measured round (default 4), {@code --rounds N} (default 6:
 * the same 24 s per variant as 3 rounds of 8 s, alternated twice as often, so that the server's
 * background work, checkpoints and autovacuum, falls on every variant alike), {@code --workers N}
 * (default 8), {@code --profile} (the embedded server with {@code pg_stat_statements}: each run's
 * statements per request). {@code IDEMKIT_JDBC_URL} picks a server; by default an embedded
 * PostgreSQL in a fresh temporary directory.
 */
public final class StoreBenchmark {

  private final DataSource dataSource;
  private final Idempotency idempotency;

  /** The same store with answers and recovery data encrypted at rest (docs/data-protection.md). */
  private final Idempotency encrypted;

  private final Keys completedEncrypted = new Keys();
  private final int workers;
  private final Keys completed = new Keys();

  /**
   * Up to {@value #KEPT} keys the wrapped runs completed, for the replays. Kept without copying: a
   * {@code CopyOnWriteArrayList} copied its whole array on every add, up to 160 kB a request, which
   * the wrapped rounds paid and the bare and sql rounds did not.
   */
  private static final class Keys {
    private final AtomicReferenceArray<ScopedKey> keys = new AtomicReferenceArray<>(KEPT);
    private final AtomicInteger added = new AtomicInteger();

    void add(ScopedKey key) {
      if (added.get() < KEPT) {
        int i = added.getAndIncrement();
        if (i < KEPT) {
          keys.set(i, key);
        }
      }
    }

    /** One of the keys added so far, at random (waiting for a slot whose key is being set). */
    ScopedKey any() {
      int n = Math.min(added.get(), KEPT);
      while (true) {
        ScopedKey key = keys.get(ThreadLocalRandom.current().nextInt(n));
        if (key != null) {
          return key;
        }
      }
    }
  }

  private static final int KEPT = 20_000;
  private final String tenant = "bench-" + UUID.randomUUID().toString().substring(0, 8);

  private StoreBenchmark(DataSource dataSource, int workers) {
    this.dataSource = dataSource;
    this.workers = workers;
    this.idempotency = Idempotency.create(PostgresIdempotencyStore.create(dataSource));
    DataProtection protection =
        DataProtection.builder()
            .encryption(
                StaticKeyProvider.ofBase64(
                    Map.of("bench-mk", StaticKeyProvider.newKeyBase64()), "bench-mk"),
                new PostgresDataKeyStore(dataSource))
            .build();
    this.encrypted =
        Idempotency.create(protection.protect(PostgresIdempotencyStore.create(dataSource)));
  }

  public static void main(String[] args) throws Exception {
    int seconds = intArg(args, "--seconds", 4);
    int rounds = intArg(args, "--rounds", 6);
    int workers = intArg(args, "--workers", 8);
    boolean profile = Arrays.asList(args).contains("--profile");
    String url = System.getenv("IDEMKIT_JDBC_URL");
    boolean embedded = url == null || url.isBlank();
    System.out.println("bench/store: starting PostgreSQL ...");
    Path dir = embedded ? Files.createTempDirectory("idemkit-bench-pg") : null;
    EmbeddedPostgres profiled = null;
    if (profile && embedded) {
      // The same embedded server, with pg_stat_statements loaded: what each variant sends.
      profiled = DatabaseCounters.embeddedWithStatements(dir);
    }
    try (IdemkitDatabase db =
        profiled != null
            ? IdemkitDatabase.connect(
                profiled.getJdbcUrl("postgres", "postgres"), "postgres", null, workers)
            : embedded
                ? IdemkitDatabase.embedded(dir, workers)
                : IdemkitDatabase.fromEnvironment(workers)) {
      System.out.printf(
          "Database: %s; %d workers on a pool of %d connections; %d rounds of %d s%n%n",
          db.description(), workers, workers, rounds, seconds);
      HikariConfig counted = new HikariConfig();
      HikariDataSource pool = (HikariDataSource) db.dataSource();
      String poolUrl = pool.getJdbcUrl();
      counted.setJdbcUrl(
          poolUrl
              + (poolUrl.contains("?") ? "&" : "?")
              + "socketFactory="
              + RoundTripCounter.class.getName());
      counted.setUsername(pool.getUsername());
      counted.setPassword(pool.getPassword());
      counted.setMaximumPoolSize(workers);
      counted.setMinimumIdle(workers);
      counted.setPoolName("bench");
      counted.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
      countingPool = new HikariDataSource(counted);
      StoreBenchmark bench = new StoreBenchmark(countingPool, workers);
      bench.profile = profile;
      bench.run(rounds, Duration.ofSeconds(seconds));
    } finally {
      if (countingPool != null) {
        countingPool.close();
      }
      if (profiled != null) {
        profiled.close();
      }
    }
  }

  /** The benchmark's own pool: the database's, with every round trip counted. */
  private static HikariDataSource countingPool;

  /** With --profile: the statements each measured run sent, per request. */
  private boolean profile;

  private void resetStatements() {
    if (!profile) {
      return;
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("create extension if not exists pg_stat_statements");
      s.execute("select pg_stat_statements_reset()");
    } catch (SQLException e) {
      System.out.println("  (no pg_stat_statements: " + e.getMessage() + ")");
    }
  }

  private void printStatements(String name, long requests) {
    if (!profile || requests == 0) {
      return;
    }
    System.out.printf("  %s: statements per request (pg_stat_statements)%n", name);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select calls, mean_exec_time, regexp_replace(left(query, 80), '\\s+', ' ', 'g')"
                    + " from pg_stat_statements where query not like '%pg_stat_statements%'"
                    + " order by calls desc limit 10")) {
      while (rs.next()) {
        System.out.printf(
            "    %6.2f per request  %7.3f ms each  %s%n",
            rs.getLong(1) / (double) requests, rs.getDouble(2), rs.getString(3));
      }
    } catch (SQLException e) {
      System.out.println("    (no pg_stat_statements: " + e.getMessage() + ")");
    }
  }

  private void run(int rounds, Duration round) throws Exception {
    createTables();
    findPostmaster();
    System.out.println("warm-up (not counted) ...");
    measure("bare", Duration.ofSeconds(3), this::bare);
    measure("wrapped", Duration.ofSeconds(3), this::wrapped);
    measure("sql", Duration.ofSeconds(3), this::sql);
    measure("encrypted", Duration.ofSeconds(3), this::wrappedEncrypted);
    measure("claim-first", Duration.ofSeconds(3), this::claimFirst);

    double bareTotal = 0;
    double wrappedTotal = 0;
    double sqlTotal = 0;
    double encryptedTotal = 0;
    double claimFirstTotal = 0;
    for (int r = 1; r <= rounds; r++) {
      double bare = measure("bare", round, this::bare);
      double wrapped = measure("wrapped", round, this::wrapped);
      double sql = measure("sql", round, this::sql);
      double enc = measure("encrypted", round, this::wrappedEncrypted);
      double claimFirst = measure("claim-first", round, this::claimFirst);
      bareTotal += bare;
      wrappedTotal += wrapped;
      sqlTotal += sql;
      encryptedTotal += enc;
      claimFirstTotal += claimFirst;
      System.out.printf(
          "round %d/%d: bare %8.0f tx/s   wrapped %8.0f tx/s   sql %8.0f tx/s   encrypted %8.0f"
              + " tx/s   claim-first %8.0f tx/s   wrapped/bare %.2f   wrapped/sql %.2f"
              + "   encrypted/wrapped %.2f   claim-first/bare %.2f%n",
          r,
          rounds,
          bare,
          wrapped,
          sql,
          enc,
          claimFirst,
          wrapped / bare,
          wrapped / sql,
          enc / wrapped,
          claimFirst / bare);
    }
    double bare = bareTotal / rounds;
    double wrapped = wrappedTotal / rounds;
    double sql = sqlTotal / rounds;
    double enc = encryptedTotal / rounds;
    double claimFirst = claimFirstTotal / rounds;
    double replay = measure("replay", round, this::replay);
    double encReplay = measure("encrypted replay", round, this::replayEncrypted);

    System.out.println();
    System.out.printf("bare business transaction   %8.0f requests/s%n", bare);
    System.out.printf("wrapped by Idemkit          %8.0f requests/s%n", wrapped);
    System.out.printf("its SQL alone, no engine    %8.0f requests/s%n", sql);
    System.out.printf("replay of a completed key   %8.0f requests/s%n", replay);
    System.out.printf("wrapped, answers encrypted  %8.0f requests/s%n", enc);
    System.out.printf("replay, answer decrypted    %8.0f requests/s%n", encReplay);
    System.out.printf("wrapped, claiming first     %8.0f requests/s%n", claimFirst);
    System.out.printf("wrapped / bare   = %.2f   (target >= 0.80)%n", wrapped / bare);
    System.out.printf("claim-first / bare = %.2f%n", claimFirst / bare);
    System.out.printf("replay / wrapped = %.2f   (target >= 3.00)%n", replay / wrapped);
    System.out.printf(
        "wrapped / sql    = %.2f   (the engine's share; sql / bare = %.2f, the SQL's)%n",
        wrapped / sql, sql / bare);
    System.out.printf("encrypted / plain = %.2f  (target >= 0.95)%n", enc / wrapped);
    System.out.println();
    System.out.println(
        "Where the CPU went, per request (2 cores shared by the JVM and PostgreSQL; worker: the"
            + " worker threads' own CPU, and what they allocated):");
    System.out.printf(
        "  %-16s %-44s %6s %6s %8s %8s%n",
        "",
        "round trips",
        "JVM us",
        "worker",
        "B alloc",
        postmaster.isPresent() ? "PG us" : "rest us");
    printCpu("bare", "3 (2 inserts, commit)");
    printCpu("wrapped", "3 (2 inserts, record+commit)");
    printCpu("sql", "3 (the same statements, no engine)");
    printCpu("replay", "1 (replays read first: one auto-commit read)");
    printCpu("encrypted", "3 (as wrapped; the answer sealed)");
    printCpu("encrypted replay", "1 (as replay; the answer opened)");
    printCpu("claim-first", "4 (claim, 2 inserts, complete+commit)");
    checkOnePaymentPerKey();

    System.out.println();
    System.out.printf(
        "Per request, each variant alone on one connection, %d requests (round trips counted by"
            + " the driver's socket; record rows: inserts, updates and deletes of idemkit_record"
            + " and idemkit_record_history in pg_stat_user_tables; WAL from pg_current_wal_lsn):%n",
        ACCOUNTED);
    System.out.printf("  %-12s %12s %12s %10s%n", "", "round trips", "record rows", "WAL bytes");
    Accounts bareAccounts = account("bare", this::bare);
    Accounts wrappedAccounts = account("wrapped", this::wrapped);
    account("sql", this::sql);
    account("claim-first", this::claimFirst);
    double extraRoundTrips = wrappedAccounts.roundTrips() - bareAccounts.roundTrips();
    double recordWrites = wrappedAccounts.recordRows();

    System.out.printf(
        "FIGURES bare_rps=%.0f wrapped_rps=%.0f sql_rps=%.0f replay_rps=%.0f"
            + " encrypted_vs_plain=%.2f encrypted_rps=%.0f encrypted_replay_rps=%.0f"
            + " claim_first_rps=%.0f claim_first_vs_bare=%.2f replay_vs_wrapped=%.2f"
            + " wal_bytes_per_op=%.0f bare_wal_bytes_per_op=%.0f%n",
        bare,
        wrapped,
        sql,
        replay,
        enc / wrapped,
        enc,
        encReplay,
        claimFirst,
        claimFirst / bare,
        replay / wrapped,
        wrappedAccounts.walBytes(),
        bareAccounts.walBytes());
    System.out.printf(
        "RESULT wrapped_vs_bare=%.2f engine_vs_sql=%.2f record_writes_per_op=%s"
            + " extra_round_trips=%s%n",
        wrapped / bare, wrapped / sql, plain(recordWrites), plain(extraRoundTrips));
  }

  /** Requests of each variant in the accounting. */
  private static final int ACCOUNTED = 2_000;

  /** What one variant cost per request, from the counters. */
  private record Accounts(double roundTrips, double recordRows, double walBytes) {}

  /**
   * Runs {@code request} {@value #ACCOUNTED} times on this thread (one connection at a time, so
   * nothing else runs on the pool) and reads the counters around it. The table counters reach the
   * readers only once a backend reports them ({@link #settle()}): each reading settles first.
   */
  private Accounts account(String name, Request request) throws Exception {
    request.run(); // a first request: the connection checked and warm
    settle();
    long[] before = databaseCounters();
    long trips = RoundTripCounter.count();
    for (int i = 0; i < ACCOUNTED; i++) {
      request.run();
    }
    trips = RoundTripCounter.count() - trips;
    long wal = walBytesSince(before[1]);
    settle();
    long[] after = databaseCounters();
    Accounts a =
        new Accounts(
            trips / (double) ACCOUNTED,
            (after[0] - before[0]) / (double) ACCOUNTED,
            wal / (double) ACCOUNTED);
    System.out.printf(
        "  %-12s %12.2f %12.2f %10.0f%n", name, a.roundTrips(), a.recordRows(), a.walBytes());
    return a;
  }

  /**
   * Lets the connection this thread uses report its table counters. A backend reports them at the
   * end of a transaction at most every 500 ms (PostgreSQL 14 sends them to the statistics
   * collector, which the readers see a moment later; 15 flushes an idle backend's within a second):
   * a transaction after the interval, then a pause, and the counters of everything before it are
   * there.
   */
  private void settle() throws Exception {
    Thread.sleep(700);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("select 1");
    }
    Thread.sleep(1_200);
  }

  /** The record tables' rows written so far, and the WAL position (bytes since 0/0). */
  private long[] databaseCounters() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select (select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)"
                    + " from pg_stat_user_tables"
                    + " where relname in ('idemkit_record', 'idemkit_record_history')),"
                    + " pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  private long walBytesSince(long position) throws SQLException {
    return databaseCounters()[1] - position;
  }

  /** {@code x} to two decimals, without trailing zeros: 1, 0, 0.5, 1.25. */
  private static String plain(double x) {
    return new BigDecimal(x)
        .setScale(2, java.math.RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  @FunctionalInterface
  private interface Request {
    void run() throws Exception;
  }

  /**
   * Throughput and where the machine's CPU went, per request; of the JVM's, what the worker threads
   * themselves spent and allocated (the request's own work, without the collector and the
   * compiler).
   */
  private record Run(
      double rps, double jvmMicros, double otherMicros, double workerMicros, double workerBytes) {}

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

  private final Map<String, List<Run>> runs = new java.util.LinkedHashMap<>();

  /** Runs {@code request} on every worker for {@code length}; returns requests per second. */
  private double measure(String name, Duration length, Request request) throws Exception {
    resetStatements();
    long[] cpuBefore = machineCpuTicks();
    long jvmBefore = jvmCpuNanos();
    long postgresBefore = postgresCpuNanos();
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    AtomicBoolean stop = new AtomicBoolean();
    LongAdder done = new LongAdder();
    LongAdder workerCpu = new LongAdder();
    LongAdder workerBytes = new LongAdder();
    List<Future<?>> futures = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < workers; i++) {
      futures.add(
          pool.submit(
              () -> {
                long cpu = THREADS.getCurrentThreadCpuTime();
                long bytes = THREADS.getCurrentThreadAllocatedBytes();
                while (!stop.get()) {
                  request.run();
                  done.increment();
                }
                workerCpu.add(THREADS.getCurrentThreadCpuTime() - cpu);
                workerBytes.add(THREADS.getCurrentThreadAllocatedBytes() - bytes);
                return null;
              }));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    for (Future<?> f : futures) {
      f.get();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    long[] cpuAfter = machineCpuTicks();
    double busyMicros = (cpuAfter[0] - cpuBefore[0]) * 1e6 / 100.0; // USER_HZ = 100
    double jvmMicros = (jvmCpuNanos() - jvmBefore) / 1e3;
    long n = done.sum();
    double otherMicros =
        postmaster.isPresent()
            ? (postgresCpuNanos() - postgresBefore) / 1e3
            : Math.max(0, busyMicros - jvmMicros);
    runs.computeIfAbsent(name, k -> new ArrayList<>())
        .add(
            new Run(
                n / seconds,
                jvmMicros / n,
                otherMicros / n,
                workerCpu.sum() / 1e3 / n,
                workerBytes.sum() / (double) n));
    printStatements(name, n);
    return n / seconds;
  }

  /**
   * The PostgreSQL server's postmaster when it runs on this machine and its data directory is
   * readable (the embedded default): its CPU and its backends' is then counted apart from whatever
   * else the machine runs.
   */
  private Optional<ProcessHandle> postmaster = Optional.empty();

  private void findPostmaster() {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("show data_directory")) {
      rs.next();
      Path pid = Path.of(rs.getString(1), "postmaster.pid");
      postmaster = ProcessHandle.of(Long.parseLong(Files.readAllLines(pid).get(0).trim()));
    } catch (Exception notHere) {
      postmaster = Optional.empty();
    }
  }

  /** CPU of the postmaster and every backend it has now (the pool's stay for the whole run). */
  private long postgresCpuNanos() {
    return postmaster
        .map(pm -> cpuNanos(pm) + pm.descendants().mapToLong(StoreBenchmark::cpuNanos).sum())
        .orElse(0L);
  }

  private static long cpuNanos(ProcessHandle p) {
    return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }

  private static long jvmCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Busy ticks of the whole machine from /proc/stat (zero where there is none). */
  private static long[] machineCpuTicks() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long busy = 0;
      for (int i = 1; i < f.length; i++) {
        if (i != 4 && i != 5) { // idle, iowait
          busy += Long.parseLong(f[i]);
        }
      }
      return new long[] {busy};
    } catch (Exception e) {
      return new long[] {0};
    }
  }

  private void bare() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        insertPaymentAndEvent(c, UUID.randomUUID());
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private void wrapped() {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
    Outcome outcome = pay(id);
    if (!(outcome instanceof Outcome.Executed)) {
      throw new IllegalStateException("expected an execution, got " + outcome);
    }
    completed.add(id);
  }

  private void claimFirst() {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
    Outcome outcome = idempotency.execute(request(id), LocalOperation.claimingFirst(payment()));
    if (!(outcome instanceof Outcome.Executed)) {
      throw new IllegalStateException("expected an execution, got " + outcome);
    }
  }

  private void replay() {
    ScopedKey id = completed.any();
    Outcome outcome = pay(id);
    if (!(outcome instanceof Outcome.Replayed)) {
      throw new IllegalStateException("expected a replay, got " + outcome);
    }
  }

  private void wrappedEncrypted() {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
    Outcome outcome = pay(encrypted, id);
    if (!(outcome instanceof Outcome.Executed)) {
      throw new IllegalStateException("expected an execution, got " + outcome);
    }
    completedEncrypted.add(id);
  }

  private void replayEncrypted() {
    ScopedKey id = completedEncrypted.any();
    Outcome outcome = pay(encrypted, id);
    if (!(outcome instanceof Outcome.Replayed)) {
      throw new IllegalStateException("expected a replay, got " + outcome);
    }
  }

  /*
   * The "sql" variant. What the wrapped variant sends for its LocalOperation, statement for
   * statement: the store's transaction (DataSourceTransactions: autocommit off; nothing for
   * ReadCommitted to send, the pool's connections being READ COMMITTED), the two business inserts,
   * then the insert of the finished record with the commit in one round trip. RECORD is
   * PostgresIdempotencyStore's text (read from the store), bound with the same values.
   */

  /**
   * The store's own insert of a local operation's finished record with the commit, read from it so
   * that the two cannot drift apart.
   */
  private static final String RECORD = storeStatement("INSERT_FINISHED_AND_COMMIT");

  /** The window the wrapped variant asks for. */
  private static final Duration TTL = Duration.ofHours(24);

  /** The stored headers as the store writes them ({@code Json.write} of the answer's headers). */
  private static final String HEADERS = "{\"Content-Type\":\"application/json\"}";

  private void sql() throws SQLException {
    String key = UUID.randomUUID().toString();
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        UUID paymentId = UUID.randomUUID();
        insertPaymentAndEvent(c, paymentId);
        record(c, key, paymentId);
        c.commit(); // sends nothing: the record's round trip committed
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    }
  }

  private void record(Connection c, String key, UUID paymentId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RECORD)) {
      ps.setNull(1, Types.VARCHAR);
      ps.setString(2, tenant);
      ps.setString(3, "create_payment");
      ps.setString(4, key);
      ps.setString(5, COMMAND.toString());
      ps.setString(6, "COMPLETED");
      ps.setInt(7, 201);
      ps.setString(8, HEADERS);
      ps.setBytes(9, answer(paymentId));
      ps.setInt(10, 1);
      ps.setString(11, paymentId.toString());
      ps.setLong(12, TTL.toMillis());
      ps.execute();
      int rows = ps.getUpdateCount();
      if (rows != 1) {
        throw new IllegalStateException("the record of " + key + " inserted " + rows + " rows");
      }
    }
  }

  private static String storeStatement(String name) {
    try {
      Field field = PostgresIdempotencyStore.class.getDeclaredField(name);
      field.setAccessible(true);
      // A NamedSql: its JDBC text, each :name a "?" in the order the names stand
      Object statement = field.get(null);
      Method sql = statement.getClass().getDeclaredMethod("sql");
      sql.setAccessible(true);
      return (String) sql.invoke(statement);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("PostgresIdempotencyStore has no statement " + name, e);
    }
  }

  private static byte[] answer(UUID paymentId) {
    return ("{\"paymentId\":\"" + paymentId + "\",\"status\":\"CREATED\",\"amount\":\"10.00\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static final Fingerprint COMMAND =
      Fingerprint.of(Map.of("accountId", "acc_1", "amount", "10.00", "currency", "EUR"));

  private Outcome pay(ScopedKey id) {
    return pay(idempotency, id);
  }

  private Outcome pay(Idempotency idempotency, ScopedKey id) {
    return idempotency.execute(request(id), payment());
  }

  private static IdempotentRequest request(ScopedKey id) {
    return new IdempotentRequest(id, COMMAND, TTL);
  }

  private static LocalOperation payment() {
    return ctx -> {
      UUID paymentId = UUID.randomUUID();
      insertPaymentAndEvent(ctx.unwrap(Connection.class), paymentId);
      return OperationResult.success(
          StoredResponse.of(201, Map.of("Content-Type", "application/json"), answer(paymentId))
              .withResourceId(paymentId.toString()));
    };
  }

  private static void insertPaymentAndEvent(Connection c, UUID paymentId) throws SQLException {
    try (PreparedStatement payment =
        c.prepareStatement(
            "insert into bench_payment (id, account_id, amount, currency, merchant_reference)"
                + " values (?, 'acc_1', ?, 'EUR', ?)")) {
      payment.setObject(1, paymentId);
      payment.setBigDecimal(2, new BigDecimal("10.00"));
      payment.setString(3, "order-" + paymentId);
      payment.executeUpdate();
    }
    try (PreparedStatement event =
        c.prepareStatement(
            "insert into bench_outbox (event_id, aggregate_id, event_type, payload)"
                + " values (?, ?, 'PaymentCreated', ?)")) {
      event.setObject(1, UUID.randomUUID());
      event.setObject(2, paymentId);
      event.setString(3, "{\"paymentId\":\"" + paymentId + "\",\"amount\":\"10.00\"}");
      event.executeUpdate();
    }
  }

  private void createTables() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "create table if not exists bench_payment (id uuid primary key, account_id text not null,"
              + " amount numeric(19,2) not null, currency text not null,"
              + " merchant_reference text not null, created_at timestamptz not null default now(),"
              + " unique (account_id, merchant_reference))");
      s.execute(
          "create table if not exists bench_outbox (event_id uuid primary key,"
              + " aggregate_id uuid not null, event_type text not null, payload text not null,"
              + " created_at timestamptz not null default now())");
    }
  }

  /** The wrapped runs must have written exactly one payment per completed key. */
  private void checkOnePaymentPerKey() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select count(*), count(distinct resource_id) from idemkit_record"
                    + " where tenant = ? and state = 'COMPLETED'")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        System.out.printf(
            "Check: %d completed records, %d distinct payments%n", rs.getLong(1), rs.getLong(2));
      }
    }
  }

  private void printCpu(String name, String roundTrips) {
    List<Run> measured = runs.get(name);
    List<Run> counted = measured.size() > 1 ? measured.subList(1, measured.size()) : measured;
    double jvm = counted.stream().mapToDouble(Run::jvmMicros).average().orElse(0);
    double other = counted.stream().mapToDouble(Run::otherMicros).average().orElse(0);
    double worker = counted.stream().mapToDouble(Run::workerMicros).average().orElse(0);
    double bytes = counted.stream().mapToDouble(Run::workerBytes).average().orElse(0);
    System.out.printf(
        "  %-16s %-44s %6.0f %6.0f %8.0f %8.0f%n", name, roundTrips, jvm, worker, bytes, other);
  }

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
