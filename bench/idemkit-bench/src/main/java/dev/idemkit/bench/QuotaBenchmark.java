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
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 *   <li><b>in-memory</b>: quotas on (high enough that no key is refused), admitted in memory
 *       (schema V17), while a background thread exchanges the counts once a second as the starter's
 *       quota worker does.
 * </ul>
 *
 * <p>The PL/pgSQL count the earlier rounds measured (V10-V16) is gone with V17; its figures stay in
 * docs/benchmarks.md. Every statement the request threads prepare is counted, and those naming a
 * quota object ({@code idemkit_quota}, {@code idemkit_admit}, {@code idemkit_tenant_key}) are the
 * quota's statements on the request path: {@code quota_statements_per_op} must be 0.
 *
 * <p>Ends with {@code RESULT in_memory_vs_none=… quota_statements_per_op=… exchange_ms=…}.
 */
public final class QuotaBenchmark {

  private static final Duration TTL = Duration.ofHours(24);
  private static final Fingerprint COMMAND =
      Fingerprint.of(Map.of("accountId", "acc_1", "amount", "10.00", "currency", "EUR"));

  private final DataSource dataSource;
  private final int workers;
  private final String tenant = "quota-" + UUID.randomUUID().toString().substring(0, 8);
  private final Idempotency plain;
  private final Idempotency limited;

  /** Statements prepared by request threads, and those of them that name a quota object. */
  private static final LongAdder STATEMENTS = new LongAdder();

  private static final LongAdder QUOTA_STATEMENTS = new LongAdder();

  /** The exchange's thread: its statements are the background's, not a request's. */
  private static final String EXCHANGE_THREAD = "bench-quota-exchange";

  private final LongAdder exchanges = new LongAdder();
  private final LongAdder exchangeNanos = new LongAdder();

  private final Map<String, List<double[]>> runs = new LinkedHashMap<>();

  private QuotaBenchmark(DataSource dataSource, int workers) {
    this.dataSource = dataSource;
    this.workers = workers;
    PostgresIdempotencyStore store = PostgresIdempotencyStore.create(counting(dataSource));
    this.plain = Idempotency.create(store);
    this.limited =
        Idempotency.create(
            store, IdempotencyConfig.builder().quotas(new Quotas(100_000_000, 200)).build());
  }

  /** {@code dataSource} whose connections count the statements request threads prepare. */
  private static DataSource counting(DataSource dataSource) {
    return (DataSource)
        Proxy.newProxyInstance(
            QuotaBenchmark.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(dataSource, method, args);
              if (result instanceof Connection c) {
                return Proxy.newProxyInstance(
                    QuotaBenchmark.class.getClassLoader(),
                    new Class<?>[] {Connection.class},
                    (p, m, a) -> {
                      if (m.getName().startsWith("prepare")
                          && a != null
                          && a[0] instanceof String sql
                          && !Thread.currentThread().getName().equals(EXCHANGE_THREAD)) {
                        STATEMENTS.increment();
                        if (sql.contains("idemkit_quota")
                            || sql.contains("idemkit_admit")
                            || sql.contains("idemkit_tenant_key")) {
                          QUOTA_STATEMENTS.increment();
                        }
                      }
                      return invoke(c, m, a);
                    });
              }
              return result;
            });
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
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
    ScheduledExecutorService exchange =
        Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, EXCHANGE_THREAD));
    exchange.scheduleWithFixedDelay(
        () -> {
          long t0 = System.nanoTime();
          limited.syncQuotas();
          exchangeNanos.add(System.nanoTime() - t0);
          exchanges.increment();
        },
        0,
        1,
        TimeUnit.SECONDS);
    try {
      System.out.println("warm-up (not counted) ...");
      measure("none", Duration.ofSeconds(3));
      measure("in-memory", Duration.ofSeconds(3));
      runs.clear();
      STATEMENTS.reset();
      QUOTA_STATEMENTS.reset();
      List<String> order = new ArrayList<>(List.of("none", "in-memory"));
      long ops = 0;
      for (int r = 1; r <= rounds; r++) {
        StringBuilder line = new StringBuilder(String.format("round %d/%d:", r, rounds));
        for (String variant : order) {
          double[] run = measure(variant, round);
          ops += (long) run[3];
          line.append(String.format("  %-9s %6.0f tx/s (p99 %5.1f ms)", variant, run[0], run[2]));
        }
        System.out.println(line);
        order.add(order.remove(0)); // each variant first in turn
      }
      double none = mean("none", 0);
      double inMemory = mean("in-memory", 0);
      System.out.println();
      System.out.println("               tx/s   p50 ms   p99 ms   (means of the rounds)");
      for (String v : List.of("none", "in-memory")) {
        System.out.printf("  %-9s %8.0f %8.2f %8.2f%n", v, mean(v, 0), mean(v, 1), mean(v, 2));
      }
      double exchangeMs = exchanges.sum() == 0 ? 0 : exchangeNanos.sum() / 1e6 / exchanges.sum();
      System.out.printf(
          "Request threads prepared %d statements for %d operations (%.2f each), %d of them on a"
              + " quota object; %d exchanges in the background, %.2f ms each%n",
          STATEMENTS.sum(),
          ops,
          (double) STATEMENTS.sum() / ops,
          QUOTA_STATEMENTS.sum(),
          exchanges.sum(),
          exchangeMs);
      checkCounts();
      System.out.printf(
          "RESULT in_memory_vs_none=%.2f quota_statements_per_op=%s exchange_ms=%.2f%n",
          inMemory / none,
          QUOTA_STATEMENTS.sum() == 0
              ? "0"
              : String.format("%.4f", (double) QUOTA_STATEMENTS.sum() / ops),
          exchangeMs);
    } finally {
      exchange.shutdownNow();
    }
  }

  /** Runs one variant on every worker for {@code length}: tx/s, p50 ms, p99 ms. */
  private double[] measure(String variant, Duration length) throws Exception {
    Idempotency idempotency = "none".equals(variant) ? plain : limited;
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
      done.sum() / seconds,
      percentile(sorted, 0.50) / 1e6,
      percentile(sorted, 0.99) / 1e6,
      done.sum()
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

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
