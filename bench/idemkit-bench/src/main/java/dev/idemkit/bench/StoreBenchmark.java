package dev.idemkit.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.DataProtection;
import dev.idemkit.Idempotency;
import dev.idemkit.LocalOperation;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresDataKeyStore;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
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
 * <p>Then the accounting: each variant alone, on one connection, for {@value
 * StoreAccounting#ACCOUNTED} requests: the round trips it made (counted by the driver's socket,
 * {@link RoundTripCounter}), the record rows it wrote (inserts, updates and deletes of {@code
 * idemkit_record} and {@code idemkit_record_history} in {@code pg_stat_user_tables}) and the WAL it
 * generated ({@code pg_current_wal_lsn()}), per request.
 *
 * <p>Arguments: {@code --seconds N} per measured round (default 4), {@code --rounds N} (default 6:
 * the same 24 s per variant as 3 rounds of 8 s, alternated twice as often, so that the server's
 * background work, checkpoints and autovacuum, falls on every variant alike), {@code --workers N}
 * (default 8), {@code --profile} (the embedded server with {@code pg_stat_statements}: each run's
 * statements per request). {@code IDEMKIT_JDBC_URL} picks a server; by default an embedded
 * PostgreSQL in a fresh temporary directory.
 */
public final class StoreBenchmark {

  private final Idempotency idempotency;

  /** The same store with answers and recovery data encrypted at rest (docs/data-protection.md). */
  private final Idempotency encrypted;

  private final StoreWorkload.Keys completedEncrypted = new StoreWorkload.Keys();
  private final StoreWorkload.Keys completed = new StoreWorkload.Keys();

  private final String tenant = "bench-" + UUID.randomUUID().toString().substring(0, 8);

  /** The business write, its variants and its tables. */
  private final StoreWorkload workload;

  /** Each variant on every worker, with its CPU (and with --profile its statements). */
  private final StoreRuns runs;

  /** Each variant alone: round trips, record rows and WAL per request. */
  private final StoreAccounting accounting;

  private StoreBenchmark(DataSource dataSource, int workers) {
    this.workload = new StoreWorkload(dataSource, tenant);
    this.runs = new StoreRuns(dataSource, workers);
    this.accounting = new StoreAccounting(dataSource);
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
    int seconds = BenchArgs.intArg(args, "--seconds", 4);
    int rounds = BenchArgs.intArg(args, "--rounds", 6);
    int workers = BenchArgs.intArg(args, "--workers", 8);
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
      bench.runs.profile = profile;
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

  private void run(int rounds, Duration round) throws Exception {
    workload.createTables();
    runs.findPostmaster();
    System.out.println("warm-up (not counted) ...");
    runs.measure("bare", Duration.ofSeconds(3), workload::bare);
    runs.measure("wrapped", Duration.ofSeconds(3), this::wrapped);
    runs.measure("sql", Duration.ofSeconds(3), workload::sql);
    runs.measure("encrypted", Duration.ofSeconds(3), this::wrappedEncrypted);
    runs.measure("claim-first", Duration.ofSeconds(3), this::claimFirst);

    double bareTotal = 0;
    double wrappedTotal = 0;
    double sqlTotal = 0;
    double encryptedTotal = 0;
    double claimFirstTotal = 0;
    for (int r = 1; r <= rounds; r++) {
      double bare = runs.measure("bare", round, workload::bare);
      double wrapped = runs.measure("wrapped", round, this::wrapped);
      double sql = runs.measure("sql", round, workload::sql);
      double enc = runs.measure("encrypted", round, this::wrappedEncrypted);
      double claimFirst = runs.measure("claim-first", round, this::claimFirst);
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
    double replay = runs.measure("replay", round, this::replay);
    double encReplay = runs.measure("encrypted replay", round, this::replayEncrypted);

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
        runs.postmaster.isPresent() ? "PG us" : "rest us");
    runs.printCpu("bare", "3 (2 inserts, commit)");
    runs.printCpu("wrapped", "3 (2 inserts, record+commit)");
    runs.printCpu("sql", "3 (the same statements, no engine)");
    runs.printCpu("replay", "1 (replays read first: one auto-commit read)");
    runs.printCpu("encrypted", "3 (as wrapped; the answer sealed)");
    runs.printCpu("encrypted replay", "1 (as replay; the answer opened)");
    runs.printCpu("claim-first", "4 (claim, 2 inserts, complete+commit)");
    workload.checkOnePaymentPerKey();

    System.out.println();
    System.out.printf(
        "Per request, each variant alone on one connection, %d requests (round trips counted by"
            + " the driver's socket; record rows: inserts, updates and deletes of idemkit_record"
            + " and idemkit_record_history in pg_stat_user_tables; WAL from pg_current_wal_lsn):%n",
        StoreAccounting.ACCOUNTED);
    System.out.printf("  %-12s %12s %12s %10s%n", "", "round trips", "record rows", "WAL bytes");
    StoreAccounting.Accounts bareAccounts = accounting.account("bare", workload::bare);
    StoreAccounting.Accounts wrappedAccounts = accounting.account("wrapped", this::wrapped);
    accounting.account("sql", workload::sql);
    accounting.account("claim-first", this::claimFirst);
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

  /** {@code x} to two decimals, without trailing zeros: 1, 0, 0.5, 1.25. */
  private static String plain(double x) {
    return new BigDecimal(x)
        .setScale(2, java.math.RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
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
    Outcome outcome =
        idempotency.execute(
            StoreWorkload.request(id), LocalOperation.claimingFirst(StoreWorkload.payment()));
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

  private Outcome pay(ScopedKey id) {
    return pay(idempotency, id);
  }

  private Outcome pay(Idempotency idempotency, ScopedKey id) {
    return idempotency.execute(StoreWorkload.request(id), StoreWorkload.payment());
  }
}
