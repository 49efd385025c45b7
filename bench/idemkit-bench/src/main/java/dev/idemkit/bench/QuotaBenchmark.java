package dev.idemkit.bench;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.Quotas;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
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
 * The cost of a tenant's quotas on its new keys, when many of one tenant's new keys arrive at once
 * (docs/benchmarks.md, {@code bench/quota}). Workers of ONE tenant run a local operation (a payment
 * row and its outbox row, as in {@code bench/store}) with a fresh key each, in alternating rounds:
 *
 * <ul>
 *   <li><b>none</b>: no quotas;
 *   <li><b>one-row</b>: quotas on, counted by the store's {@code idemkit_admit} as schema V10-V12
 *       wrote it: every new key of the tenant counts in the one row of its current minute, locked
 *       until the claim's transaction has committed;
 *   <li><b>slots</b>: quotas on, counted by {@code idemkit_admit} as schema V14 wrote it: in one of
 *       up to 16 slot rows that no other transaction holds, found by reading all of them;
 *   <li><b>own-slot</b>: the same slots, counted by {@code idemkit_admit} as schema V15 wrote it:
 *       the connection's own slot tried first by its key, the others read only when it is held or
 *       full;
 *   <li><b>v16</b>: the count as schema V16 writes it: V15's own slot first, unchanged; when it is
 *       held or full, each attempt at another slot in a subtransaction that gives back its locks,
 *       and the wait for a slot in slot order (V15 could deadlock there).
 * </ul>
 *
 * <p>Both counts are the store's own function texts, read from its migrations and swapped between
 * rounds ({@code create or replace function}); nothing else changes. The limits are high enough
 * that no key is refused, so only the count's cost is measured. Whether a commit waits for the disk
 * decides most of it: run it on the embedded default (commits do not wait) and on a server that
 * flushes ({@code IDEMKIT_JDBC_URL}).
 *
 * <p>Ends with {@code RESULT v16_vs_own_slot=… own_slot_vs_slots=… own_slot_vs_none=…
 * slots_vs_one_row=… slots_vs_none=… one_row_vs_none=…}.
 */
public final class QuotaBenchmark {

  private static final String MIGRATIONS = "dev/idemkit/jdbc/migration/";
  private static final Duration TTL = Duration.ofHours(24);
  private static final Fingerprint COMMAND =
      Fingerprint.of(Map.of("accountId", "acc_1", "amount", "10.00", "currency", "EUR"));

  private final DataSource dataSource;
  private final int workers;
  private final String tenant = "quota-" + UUID.randomUUID().toString().substring(0, 8);
  private final Idempotency plain;
  private final Idempotency limited;

  /** The count's function text per variant with quotas on. */
  private final Map<String, String> counts = new LinkedHashMap<>();

  private final Map<String, List<double[]>> runs = new LinkedHashMap<>();

  private QuotaBenchmark(DataSource dataSource, int workers) {
    this.dataSource = dataSource;
    this.workers = workers;
    PostgresIdempotencyStore store = PostgresIdempotencyStore.create(dataSource);
    this.plain = Idempotency.create(store);
    this.limited =
        Idempotency.create(
            store, IdempotencyConfig.builder().quotas(new Quotas(100_000_000, 200)).build());
    counts.put("one-row", migration("V12__live_quota_retry_after_when_escalated.sql"));
    counts.put("slots", function(migration("V14__admit_on_slots.sql")));
    counts.put("own-slot", function(migration("V15__admit_own_slot_first.sql")));
    counts.put("v16", function(migration("V16__admit_waits_holding_no_slot.sql")));
  }

  public static void main(String[] args) throws Exception {
    int seconds = intArg(args, "--seconds", 8);
    int rounds = intArg(args, "--rounds", 3);
    int workers = intArg(args, "--workers", 8);
    String url = System.getenv("IDEMKIT_JDBC_URL");
    System.out.println("bench/quota: starting PostgreSQL ...");
    try (IdemkitDatabase db =
        url != null && !url.isBlank()
            ? IdemkitDatabase.fromEnvironment(workers)
            : IdemkitDatabase.embedded(Files.createTempDirectory("idemkit-bench-pg"), workers)) {
      QuotaBenchmark bench = new QuotaBenchmark(db.dataSource(), workers);
      System.out.printf(
          "Database: %s (fsync %s, synchronous_commit %s); %d workers of one tenant on a pool of"
              + " %d; %d rounds of %d s%n%n",
          db.description(),
          bench.setting("fsync"),
          bench.setting("synchronous_commit"),
          workers,
          workers,
          rounds,
          seconds);
      bench.run(rounds, Duration.ofSeconds(seconds));
    }
  }

  private void run(int rounds, Duration round) throws Exception {
    createTables();
    System.out.println("warm-up (not counted) ...");
    measure("none", Duration.ofSeconds(3));
    for (String variant : counts.keySet()) {
      measure(variant, Duration.ofSeconds(3));
    }
    runs.clear();
    List<String> order = new ArrayList<>(List.of("none", "one-row", "slots", "own-slot", "v16"));
    for (int r = 1; r <= rounds; r++) {
      StringBuilder line = new StringBuilder(String.format("round %d/%d:", r, rounds));
      for (String variant : order) {
        double[] run = measure(variant, round);
        line.append(String.format("  %-8s %6.0f tx/s (p99 %5.1f ms)", variant, run[0], run[2]));
      }
      System.out.println(line);
      order.add(order.remove(0)); // each variant first in turn
    }
    double none = mean("none", 0);
    double oneRow = mean("one-row", 0);
    double slots = mean("slots", 0);
    double ownSlot = mean("own-slot", 0);
    double v16 = mean("v16", 0);
    System.out.println();
    System.out.println("              tx/s   p50 ms   p99 ms   (means of the rounds)");
    for (String v : List.of("none", "one-row", "slots", "own-slot", "v16")) {
      System.out.printf("  %-8s %8.0f %8.2f %8.2f%n", v, mean(v, 0), mean(v, 1), mean(v, 2));
    }
    checkCounts();
    execute(counts.get("v16")); // the store's own count again, on a server that outlives the run
    System.out.printf(
        "RESULT v16_vs_own_slot=%.2f own_slot_vs_slots=%.2f own_slot_vs_none=%.2f"
            + " slots_vs_one_row=%.2f slots_vs_none=%.2f one_row_vs_none=%.2f%n",
        v16 / ownSlot,
        ownSlot / slots,
        ownSlot / none,
        slots / oneRow,
        slots / none,
        oneRow / none);
  }

  /** Runs one variant on every worker for {@code length}: tx/s, p50 ms, p99 ms. */
  private double[] measure(String variant, Duration length) throws Exception {
    Idempotency idempotency = "none".equals(variant) ? plain : limited;
    if (!"none".equals(variant)) {
      execute(counts.get(variant));
    }
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    AtomicBoolean stop = new AtomicBoolean();
    LongAdder done = new LongAdder();
    List<Future<long[]>> futures = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < workers; i++) {
      futures.add(
          pool.submit(
              () -> {
                long[] latencies = new long[1 << 16];
                int n = 0;
                while (!stop.get()) {
                  long t0 = System.nanoTime();
                  Outcome outcome = pay(idempotency);
                  if (!(outcome instanceof Outcome.Executed)) {
                    throw new IllegalStateException(variant + ": " + outcome);
                  }
                  if (n == latencies.length) {
                    latencies = Arrays.copyOf(latencies, n * 2);
                  }
                  latencies[n++] = System.nanoTime() - t0;
                  done.increment();
                }
                return Arrays.copyOf(latencies, n);
              }));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    List<long[]> all = new ArrayList<>();
    for (Future<long[]> f : futures) {
      all.add(f.get());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    long[] sorted = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    double[] run = {
      done.sum() / seconds, percentile(sorted, 0.50) / 1e6, percentile(sorted, 0.99) / 1e6
    };
    runs.computeIfAbsent(variant, k -> new ArrayList<>()).add(run);
    return run;
  }

  private Outcome pay(Idempotency idempotency) {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
    LocalOperation op =
        ctx -> {
          UUID paymentId = UUID.randomUUID();
          Connection c = ctx.unwrap(Connection.class);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into bench_payment (id, account_id, amount, currency,"
                      + " merchant_reference) values (?, 'acc_1', 10.00, 'EUR', ?)")) {
            ps.setObject(1, paymentId);
            ps.setString(2, "order-" + paymentId);
            ps.executeUpdate();
          }
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into bench_outbox (event_id, aggregate_id, event_type, payload)"
                      + " values (?, ?, 'PaymentCreated', ?)")) {
            ps.setObject(1, UUID.randomUUID());
            ps.setObject(2, paymentId);
            ps.setString(3, "{\"paymentId\":\"" + paymentId + "\"}");
            ps.executeUpdate();
          }
          return OperationResult.success(
              StoredResponse.of(
                  201,
                  Map.of("Content-Type", "application/json"),
                  ("{\"paymentId\":\"" + paymentId + "\"}").getBytes(StandardCharsets.UTF_8)));
        };
    return idempotency.execute(new IdempotentRequest(id, COMMAND, TTL), op);
  }

  /** Every executed key has its record and its payment (none refused, none lost). */
  private void checkCounts() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select count(*), (select count(*) from bench_payment) from idemkit_record"
                    + " where tenant = ? and state = 'COMPLETED'")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        System.out.printf(
            "Check: %d completed records, %d payments%n", rs.getLong(1), rs.getLong(2));
      }
    }
  }

  /** A migration's {@code idemkit_admit}, without what the migration does before it. */
  private static String function(String migration) {
    return migration.substring(migration.indexOf("create or replace function idemkit_admit"));
  }

  private void createTables() throws SQLException {
    execute(
        "create table if not exists bench_payment (id uuid primary key, account_id text not null,"
            + " amount numeric(19,2) not null, currency text not null,"
            + " merchant_reference text not null, unique (account_id, merchant_reference))");
    execute(
        "create table if not exists bench_outbox (event_id uuid primary key,"
            + " aggregate_id uuid not null, event_type text not null, payload text not null)");
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private String setting(String name) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("show " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private double mean(String variant, int column) {
    return runs.get(variant).stream().mapToDouble(r -> r[column]).average().orElse(0);
  }

  private static long percentile(long[] sorted, double p) {
    return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, sorted.length * p)];
  }

  private static String migration(String name) {
    try (InputStream in =
        QuotaBenchmark.class.getClassLoader().getResourceAsStream(MIGRATIONS + name)) {
      if (in == null) {
        throw new IllegalStateException("No migration " + name + " on the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
