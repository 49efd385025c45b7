package dev.idemkit.bench;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.jdbc.RecordLayout;
import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * The cleanup benchmark: a record table of {@code --records} realistic rows (default 1,000,000; 20%
 * past their window, each with a ~400-byte stored response), then
 *
 * <ol>
 *   <li>cleanup alone, unpaced (after a 10 s warm-up of claims): every expired body dropped, then
 *       every such record deleted (metadata retention 0), in batches of {@code --batch}; rows per
 *       second over both walks;
 *   <li>another 10% of the table expired, then {@code --rounds} rounds (default 3) of claims alone
 *       ({@code --workers} threads claiming and completing new keys for {@code --seconds}) followed
 *       by the same claims while cleanup runs as the starter schedules it (a batch, a pause of
 *       {@code --pause-ms}, ...); claims_during_cleanup is the ratio of their sums.
 * </ol>
 *
 * <p>The table is then cleaned up, vacuumed and refilled to its size with rows past their window;
 * with {@code --cycles N} (default 1), N - 1 more times: those rows cleaned up, vacuumed, as many
 * written again. The table's size after each refill, against its size as loaded, settles if cleanup
 * leaves no bloat behind ({@code last_cycle_growth}: the last cycle's size over the one before).
 *
 * <p>Prints the plan of one batch's walk first, to show it reads its partial index in order and
 * stops after a batch (no sort of the backlog). Ends with {@code RESULT cleanup_rows_per_s=<n>
 * claims_during_cleanup=<ratio>}. {@code IDEMKIT_JDBC_URL} picks a server; by default an embedded
 * PostgreSQL in a fresh temporary directory.
 */
public final class CleanupBenchmark {

  /**
   * The walk of one body-drop batch, as the store runs it (for EXPLAIN only), on the record table
   * or its first partition.
   */
  private static final String BODY_WALK =
      """
      select tenant, operation, idem_key from %s
      where body_dropped_at is null
        and expires_at <= coalesce(cast(null as timestamptz), statement_timestamp())
                          - 0 * interval '1 millisecond'
        and state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
      order by expires_at
      limit 1000
      for update skip locked
      """;

  private final DataSource dataSource;
  private final PostgresIdempotencyStore store;
  private final Idempotency idempotency;
  private final int workers;
  private final int batch;
  private final Duration pause;
  private final boolean scattered;
  private final int rounds;
  private final int cycles;

  private CleanupBenchmark(
      DataSource dataSource,
      int workers,
      int batch,
      Duration pause,
      boolean scattered,
      int rounds,
      int cycles) {
    this.dataSource = dataSource;
    this.store = PostgresIdempotencyStore.create(dataSource);
    this.idempotency = Idempotency.create(store);
    this.workers = workers;
    this.batch = batch;
    this.pause = pause;
    this.scattered = scattered;
    this.rounds = rounds;
    this.cycles = cycles;
  }

  public static void main(String[] args) throws Exception {
    int records = intArg(args, "--records", 1_000_000);
    int seconds = intArg(args, "--seconds", 10);
    int workers = intArg(args, "--workers", 4);
    int batch = intArg(args, "--batch", 1000);
    int pauseMs = intArg(args, "--pause-ms", 20);
    boolean scattered = java.util.Arrays.asList(args).contains("--scattered");
    int rounds = intArg(args, "--rounds", 3);
    int cycles = intArg(args, "--cycles", 1);
    RecordLayout layout = RecordLoad.layout(args);
    System.out.println("bench/cleanup: starting PostgreSQL ...");
    try (IdemkitDatabase server = RecordLoad.server("idemkit-bench-cleanup-pg");
        IdemkitDatabase db =
            RecordLoad.freshSchema(server, "idemkit_bench_cleanup", layout, workers + 2)) {
      System.out.printf(
          "Database: %s; record table %s; %,d records (20%% expired, %s); batch %d, pause %d ms;"
              + " %d claim workers, %d rounds of %d s claims alone, then %d s beside cleanup%n%n",
          db.description(),
          layout,
          records,
          scattered ? "scattered over the table" : "in the order they were written",
          batch,
          pauseMs,
          workers,
          rounds,
          seconds,
          seconds);
      try {
        new CleanupBenchmark(
                db.dataSource(),
                workers,
                batch,
                Duration.ofMillis(pauseMs),
                scattered,
                rounds,
                cycles)
            .run(records, Duration.ofSeconds(seconds));
      } finally {
        RecordLoad.dropSchema(db.dataSource());
      }
    }
  }

  private void run(int records, Duration round) throws Exception {
    RecordLoad.load(dataSource, records, scattered);
    System.out.printf("%,d expired%n", count("expires_at <= now()"));
    long loadedBytes = RecordLoad.bytes(dataSource);
    System.out.println("record table as loaded: " + RecordLoad.sizes(dataSource));
    System.out.println();
    explain();

    // Warm the JIT and the claim path before anything is compared.
    measureClaims(Duration.ofSeconds(10));

    long t0 = System.nanoTime();
    CleanupResult bodies = drain(Duration.ZERO, Duration.ofDays(3650));
    double bodySeconds = (System.nanoTime() - t0) / 1e9;
    long t1 = System.nanoTime();
    CleanupResult deleted = drain(Duration.ZERO, Duration.ZERO);
    double deleteSeconds = (System.nanoTime() - t1) / 1e9;
    double rowsPerSecond =
        (bodies.bodiesDropped() + deleted.recordsDeleted()) / (bodySeconds + deleteSeconds);
    System.out.printf(
        "cleanup alone: %,d bodies dropped in %.1f s (%.0f/s), %,d records deleted in %.1f s"
            + " (%.0f/s): %.0f rows/s%n",
        bodies.bodiesDropped(),
        bodySeconds,
        bodies.bodiesDropped() / bodySeconds,
        deleted.recordsDeleted(),
        deleteSeconds,
        deleted.recordsDeleted() / deleteSeconds,
        rowsPerSecond);
    System.out.println("record table right after cleanup: " + RecordLoad.sizes(dataSource));
    String vacuum = RecordLoad.vacuumed(dataSource, 300);
    System.out.printf("after vacuum (%s): %s%n", vacuum, RecordLoad.sizes(dataSource));

    // Claims alone and claims beside paced cleanup, alternated round by round so that drift (the
    // JIT, the table's growth, the machine) hits both sides alike.
    expireMore(records / 10);
    double aloneSum = 0;
    double besideSum = 0;
    long cleanedSum = 0;
    for (int r = 1; r <= rounds; r++) {
      double alone = measureClaims(round);
      long[] cleaned = new long[1];
      double beside = claimsBesideCleanup(round, cleaned);
      aloneSum += alone;
      besideSum += beside;
      cleanedSum += cleaned[0];
      System.out.printf(
          "round %d/%d: claims alone %8.0f/s   beside cleanup %8.0f/s (cleanup meanwhile %,d rows,"
              + " %.0f rows/s)   beside/alone %.2f%n",
          r,
          rounds,
          alone,
          beside,
          cleaned[0],
          cleaned[0] / (double) round.toSeconds(),
          beside / alone);
    }
    long backlog = count("expires_at <= now()");
    if (backlog == 0) {
      System.out.println(
          "warning: the cleanup backlog ran out during the rounds; the last rounds compared claims"
              + " with an idle cleanup");
    } else {
      System.out.printf("cleanup backlog left after the rounds: %,d records%n", backlog);
    }
    double ratio = besideSum / aloneSum;
    double cleanupBeside = cleanedSum / (double) (round.toSeconds() * rounds);

    // No bloat left: once (auto)vacuum has caught up, as many new rows as cleanup removed fit in
    // the space it freed, so the table (heap and indexes) ends about the size it was loaded at.
    drain(Duration.ZERO, Duration.ZERO);
    vacuum = RecordLoad.vacuumed(dataSource, 300);
    System.out.printf(
        "%nafter cleanup of the rest and vacuum (%s): %s%n", vacuum, RecordLoad.sizes(dataSource));
    // The new rows are past their window already (as the load's oldest fifth): the next cycle's
    // cleanup takes exactly them, as a service's cleanup takes each day's records, with no update
    // of the table's other rows.
    long removed = records - count("true");
    RecordLoad.load(dataSource, records, scattered, 0, (int) Math.max(0, removed));
    double refilled = RecordLoad.bytes(dataSource) / (double) loadedBytes;
    System.out.printf(
        "refilled with the %,d rows cleanup removed: %s%n  size / size as loaded = %.3f%n",
        removed, RecordLoad.sizes(dataSource), refilled);
    // Bloat would grow cycle after cycle; a table that settles does not.
    double before = refilled;
    for (int cycle = 2; cycle <= cycles; cycle++) {
      drain(Duration.ZERO, Duration.ZERO);
      vacuum = RecordLoad.vacuumed(dataSource, 300);
      removed = records - count("true");
      RecordLoad.load(dataSource, records, scattered, 0, (int) Math.max(0, removed));
      before = refilled;
      refilled = RecordLoad.bytes(dataSource) / (double) loadedBytes;
      System.out.printf(
          "cycle %d/%d: cleaned up, vacuumed (%s) and refilled with %,d rows: %s%n  size / size as"
              + " loaded = %.3f (the cycle before: %.3f)%n",
          cycle, cycles, vacuum, removed, RecordLoad.sizes(dataSource), refilled, before);
    }
    System.out.printf(
        "cleanup rows/s = %.0f (target >= 20000); claims beside / alone = %.2f (target >= 0.80)%n",
        rowsPerSecond, ratio);
    System.out.printf(
        "RESULT cleanup_rows_per_s=%.0f claims_during_cleanup=%.2f claims_alone_per_s=%.0f"
            + " claims_beside_per_s=%.0f cleanup_beside_rows_per_s=%.0f"
            + " refilled_size_vs_loaded=%.3f last_cycle_growth=%.3f%n",
        rowsPerSecond,
        ratio,
        aloneSum / rounds,
        besideSum / rounds,
        cleanupBeside,
        refilled,
        refilled / before);
  }

  /** Claims for {@code length} while cleanup runs as the starter's worker runs it. */
  private double claimsBesideCleanup(Duration length, long[] cleanedOut) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    LongAdder cleaned = new LongAdder();
    ExecutorService cleaner = Executors.newSingleThreadExecutor();
    Future<?> cleaning =
        cleaner.submit(
            () -> {
              // A batch of each walk, then a pause; a run ends with a batch that finds less than
              // a full batch of each kind, and the next run begins at once.
              CleanupRun run = store.beginRun();
              while (!stop.get()) {
                CleanupResult r = run.batch(Duration.ZERO, Duration.ZERO, batch);
                cleaned.add(r.bodiesDropped() + r.recordsDeleted());
                if (r.bodiesDropped() < batch && r.recordsDeleted() < batch) {
                  run = store.beginRun();
                }
                Thread.sleep(pause.toMillis());
              }
              return null;
            });
    try {
      return measureClaims(length);
    } finally {
      stop.set(true);
      cleaning.get();
      cleaner.shutdown();
      cleanedOut[0] = cleaned.sum();
    }
  }

  /** One run of unpaced batches until a batch finds nothing left of either kind. */
  private CleanupResult drain(Duration body, Duration metadata) {
    CleanupRun run = store.beginRun();
    long dropped = 0;
    long deleted = 0;
    int batches = 0;
    CleanupResult r;
    do {
      r = run.batch(body, metadata, batch);
      dropped += r.bodiesDropped();
      deleted += r.recordsDeleted();
      batches += r.batches();
    } while (r.bodiesDropped() > 0 || r.recordsDeleted() > 0);
    return new CleanupResult(dropped, deleted, batches);
  }

  private void expireMore(int n) throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "update idemkit_record set expires_at = now() - interval '1 minute'"
              + " where (tableoid, ctid) in"
              + " (select tableoid, ctid from idemkit_record where body_dropped_at is null"
              + " and expires_at > now() + interval '1 hour' limit "
              + n
              + ")");
      s.execute("vacuum analyze idemkit_record");
    }
    System.out.printf("%nexpired another %,d records for cleanup beside claims%n", n);
  }

  private void explain() throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      System.out.println(
          "plan of one body-drop batch's walk in one table (EXPLAIN ANALYZE, rolled back):");
      String table;
      try (ResultSet rs =
          s.executeQuery(
              "select coalesce((select inhrelid::regclass::text from pg_inherits"
                  + " where inhparent = 'idemkit_record'::regclass order by 1 limit 1),"
                  + " 'idemkit_record')")) {
        rs.next();
        table = rs.getString(1);
      }
      try (ResultSet rs =
          s.executeQuery("explain (analyze, buffers) " + BODY_WALK.formatted(table))) {
        while (rs.next()) {
          System.out.println("  " + rs.getString(1));
        }
      }
      c.rollback();
      c.setAutoCommit(true);
    }
    System.out.println();
  }

  private long count(String condition) throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select count(*) from idemkit_record where " + condition)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private double measureClaims(Duration length) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    AtomicBoolean stop = new AtomicBoolean();
    LongAdder done = new LongAdder();
    String tenant = "bench-" + UUID.randomUUID().toString().substring(0, 8);
    byte[] body = "{\"paymentId\":\"p\",\"status\":\"COMPLETED\"}".getBytes(StandardCharsets.UTF_8);
    LocalOperation operation =
        ctx -> OperationResult.success(StoredResponse.of(201, Map.of(), body));
    List<Future<?>> futures = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < workers; i++) {
      futures.add(
          pool.submit(
              () -> {
                while (!stop.get()) {
                  ScopedKey id =
                      ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
                  Outcome o =
                      idempotency.execute(
                          new IdempotentRequest(
                              id,
                              Fingerprint.of(Map.of("k", id.key().value())),
                              Duration.ofHours(24)),
                          operation);
                  if (!(o instanceof Outcome.Executed)) {
                    throw new IllegalStateException("unexpected " + o);
                  }
                  done.increment();
                }
                return null;
              }));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    for (Future<?> f : futures) {
      f.get();
    }
    pool.shutdown();
    return done.sum() / ((System.nanoTime() - start) / 1e9);
  }

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1].replace("_", "").replace(",", ""));
      }
    }
    return fallback;
  }
}
