package dev.idemkit.bench;

import dev.idemkit.bench.HttpFigures.Cpu;
import dev.idemkit.bench.HttpFigures.Errors;
import dev.idemkit.bench.HttpFigures.LongArray;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A flood harms no one else (docs/benchmarks.md, {@code bench/flood}): one tenant of the payments
 * service sends {@code POST /v1/payments} as fast as its workers can, while other tenants send
 * ordinary payments at a steady rate each. The service runs as its own process (embedded PostgreSQL
 * in a fresh temporary directory) with one API key per tenant, the quota {@code
 * idemkit.quota.new-keys-per-minute-per-tenant} set to {@code --quota} and {@code
 * idemkit.quota.concurrent-requests-per-tenant} to {@code --bulkhead}.
 *
 * <p>Phases, each of {@code --seconds}:
 *
 * <ol>
 *   <li><b>warm-up</b> (not counted): the others' traffic, and a warm-up tenant flooding new keys
 *       (past its own quota, so that the refusal's path is warm too) and retries of one key;
 *   <li><b>baseline</b>: the others alone. It lasts at least {@code --seconds} and ends at the
 *       start of a minute of the clock, so that the new-key flood after it starts with the
 *       flooder's quota minute untouched;
 *   <li><b>flood-new</b>: the others, and the flooder's {@code --flooders} workers each sending a
 *       payment with a fresh key, one at a time, as fast as the answers come ({@code --flood-rate}
 *       caps the flooder's requests a second instead; 0: no cap). Each answer must be 201
 *       (admitted) or 429 {@code IDEMPOTENCY_QUOTA_EXCEEDED} with a {@code Retry-After};
 *   <li><b>flood-retry</b>: the others, and the flooder's workers sending retries of ONE key it
 *       paid before the flood, each answered 201 with {@code Idempotent-Replayed: true} and the
 *       first answer's body;
 *   <li><b>baseline-2</b>: the others alone again. The flood phases' p99 is compared with the lower
 *       of the two baselines' ({@code others_p99_ratio} is the larger of the two ratios).
 * </ol>
 *
 * Before flood-retry and baseline-2 the benchmark waits until the service has sent the events and
 * mails of the payments so far (the others pause), so that no phase pays for the one before it.
 *
 * <p>The others' latency is measured from the time each request was due (a request that waits for
 * the one before it counts its wait), so a stalled service is not hidden by sending less. After the
 * run, every payment any tenant got a 201 for is looked up in the service's database: its payment
 * row (by the id of its {@code Location}) and its idempotency record (by tenant and key); {@code
 * lost} counts those missing. The flooder's records are counted per minute of the database's clock
 * ({@code created_at}) and against the quota.
 *
 * <p>Arguments: {@code --seconds N} (default 40), {@code --quota N} new keys a minute per tenant
 * (default 600), {@code --bulkhead N} requests at once per tenant (default 1; 0: none), {@code
 * --others N} other tenants (default 4), {@code --other-rate N} payments a second per other tenant
 * (default 8), {@code --flooders N} (default 16), {@code --flood-rate N} (default 0), {@code
 * --warmup N} seconds (default 90: the service's JIT compilers were still busy after 40 s on two
 * shared cores), {@code --jar PATH}, {@code --service-arg ARG} (repeatable). Ends with {@code
 * RESULT others_p99_ratio=… flooder_admitted_per_min=… lost=…} and more fields; the exit status is
 * 1 if a check failed.
 */
public final class FloodBenchmark {

  private static final String FLOOD_TENANT = "tenant_flood";
  private static final String WARM_TENANT = "tenant_warm";
  private static final String PATH = "/v1/payments";

  private final HttpClient http = PaymentsServiceProcess.client();
  private final URI payments;
  private final int others;
  private final int otherRate;
  private final int flooders;
  private final int floodRate;
  private final PaymentsServiceProcess service;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong sequence = new AtomicLong();

  /** Every 201 that made a payment: what must be in the database afterwards. */
  private final ConcurrentLinkedQueue<Acknowledged> acknowledged = new ConcurrentLinkedQueue<>();

  private record Acknowledged(String tenant, String key, String paymentId) {}

  /** A key paid once, with the body it was sent with and its first answer: what retries send. */
  private record Paid(String apiKey, String key, String body, String answer) {}

  private FloodBenchmark(
      String base,
      int others,
      int otherRate,
      int flooders,
      int floodRate,
      PaymentsServiceProcess service) {
    this.payments = URI.create(base + PATH);
    this.others = others;
    this.otherRate = otherRate;
    this.flooders = flooders;
    this.floodRate = floodRate;
    this.service = service;
  }

  private static String apiKey(String tenant) {
    return "sk_bench_" + tenant;
  }

  private static String otherTenant(int i) {
    return "tenant_other_" + i;
  }

  public static void main(String[] args) throws Exception {
    int seconds = BenchArgs.intArg(args, "--seconds", 40);
    int quota = BenchArgs.intArg(args, "--quota", 600);
    int others = BenchArgs.intArg(args, "--others", 4);
    int otherRate = BenchArgs.intArg(args, "--other-rate", 8);
    int flooders = BenchArgs.intArg(args, "--flooders", 16);
    int floodRate = BenchArgs.intArg(args, "--flood-rate", 0);
    int warmup = BenchArgs.intArg(args, "--warmup", 90);
    int bulkhead = BenchArgs.intArg(args, "--bulkhead", 1);
    if (otherRate * 60L >= quota) {
      System.err.println(
          "bench/flood: --other-rate " + otherRate + "/s would reach --quota " + quota + "/min");
      System.exit(2);
    }
    Path jar =
        Path.of(
            BenchArgs.stringArg(
                args, "--jar", "examples/payments-service/target/payments-service.jar"));
    if (!Files.isRegularFile(jar)) {
      System.err.println("bench/flood: no service jar at " + jar.toAbsolutePath());
      System.exit(2);
    }
    List<String> extra = new ArrayList<>();
    extra.add("--idemkit.quota.new-keys-per-minute-per-tenant=" + quota);
    extra.add("--idemkit.quota.concurrent-requests-per-tenant=" + bulkhead);
    for (String tenant : tenants(others)) {
      extra.add("--payments.api-keys." + apiKey(tenant) + "=" + tenant);
    }
    List<String> more = BenchArgs.stringArgs(args, "--service-arg");
    extra.addAll(more);
    int port = PaymentsServiceProcess.freePort();
    Path dataDir = Files.createTempDirectory("idemkit-bench-flood-pg");
    Path log = Files.createTempFile("idemkit-bench-flood-service", ".log");
    System.out.printf(
        "bench/flood: starting the payments service on 127.0.0.1:%d (embedded PostgreSQL in %s, log"
            + " %s); quota %d new keys a minute and %d requests at once per tenant%s%n",
        port, dataDir, log, quota, bulkhead, more.isEmpty() ? "" : ", service arguments " + more);
    DatabaseCounters.prepare(dataDir, false);
    Path jarCopy = Files.createTempFile("idemkit-bench-flood-service", ".jar");
    Files.copy(jar, jarCopy, StandardCopyOption.REPLACE_EXISTING);
    PaymentsServiceProcess service =
        PaymentsServiceProcess.start(
            jarCopy, port, dataDir, log, List.of("-Dsun.net.httpserver.nodelay=true"), extra);
    Thread hook =
        new Thread(
            () -> {
              service.stop();
              PaymentsServiceProcess.deleteQuietly(dataDir);
              PaymentsServiceProcess.deleteQuietly(jarCopy);
            },
            "bench-flood-stop-service");
    Runtime.getRuntime().addShutdownHook(hook);
    int exit;
    try (AutoCloseable stop = service::stop) {
      service.awaitHealthy(port, Duration.ofMinutes(3));
      try (DatabaseCounters db = DatabaseCounters.connect(dataDir, false)) {
        System.out.printf(
            "%d other tenants at %d payments/s each; flooder: %d workers%s; %d s per phase, warm-up"
                + " %d s%n%n",
            others,
            otherRate,
            flooders,
            floodRate > 0 ? " capped at " + floodRate + " requests/s" : ", uncapped",
            seconds,
            warmup);
        exit =
            new FloodBenchmark(
                    "http://127.0.0.1:" + port, others, otherRate, flooders, floodRate, service)
                .run(db, quota, seconds, warmup);
      }
    } catch (Throwable t) {
      System.err.println("bench/flood failed: " + t);
      service.printLogTail(40);
      throw t;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
      PaymentsServiceProcess.deleteQuietly(dataDir);
      PaymentsServiceProcess.deleteQuietly(jarCopy);
    }
    if (exit == 0) {
      Files.deleteIfExists(log);
    } else {
      System.out.println("bench/flood: the service's log is kept: " + log);
    }
    System.exit(exit);
  }

  private static List<String> tenants(int others) {
    List<String> all = new ArrayList<>(List.of(FLOOD_TENANT, WARM_TENANT));
    for (int i = 1; i <= others; i++) {
      all.add(otherTenant(i));
    }
    return all;
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  private int run(DatabaseCounters counters, int quota, int seconds, int warmup) throws Exception {
    Connection db = counters.serviceDatabase();
    Duration phase = Duration.ofSeconds(seconds);
    System.out.println("warm-up (not counted) ...");
    Paid warmKey = pay(WARM_TENANT);
    Phase warm = measure("warm-up", Duration.ofSeconds(warmup / 2), Flood.NEW, WARM_TENANT, null);
    Phase warm2 =
        measure("warm-up", Duration.ofSeconds(warmup - warmup / 2), Flood.RETRY, null, warmKey);
    long warmupErrors = warm.errors.total() + warm2.errors.total();
    drain(counters);

    Paid retried = pay(FLOOD_TENANT);
    // The baseline ends at the start of a minute: the new-key flood then fills whole quota minutes
    // from their start (the quota counts per minute of the database's clock, this machine's).
    long now = System.currentTimeMillis();
    long floodStart = ((now + seconds * 1000L) / 60_000 + 1) * 60_000 + 500;
    Phase baseline =
        measure("baseline", Duration.ofMillis(floodStart - now), Flood.NONE, null, null);
    long recordsBefore = count(db, "select count(*) from idemkit_record where tenant = ?");
    long paymentsBefore = count(db, "select count(*) from payment where tenant_id = ?");
    Phase floodNew = measure("flood-new", phase, Flood.NEW, FLOOD_TENANT, null);
    long recordsAfterNew = count(db, "select count(*) from idemkit_record where tenant = ?");
    long paymentsAfterNew = count(db, "select count(*) from payment where tenant_id = ?");
    drain(counters); // the admitted payments' events and mails: the flood's work, not the retries'
    Phase floodRetry = measure("flood-retry", phase, Flood.RETRY, null, retried);
    long recordsAfterRetry = count(db, "select count(*) from idemkit_record where tenant = ?");
    drain(counters);
    Phase after = measure("baseline-2", phase, Flood.NONE, null, null);
    // The flood is compared with the calmer of the two baselines: the larger ratio.
    double reference = Math.min(baseline.othersP99(), after.othersP99());

    System.out.println();
    System.out.println(
        "phase        seconds  others: req/s   p50 ms   p99 ms  max ms   flooder: req/s  201/s "
            + " 429/s  busy/s   CPU: driver / service / PostgreSQL (cores)");
    for (Phase p : List.of(baseline, floodNew, floodRetry, after)) {
      p.print();
    }
    Map<Long, Long> perMinute = admittedPerMinute(db, floodNew);
    System.out.println();
    System.out.println(
        "The flooder's new records per minute of the database's clock (quota " + quota + "):");
    perMinute.forEach(
        (minute, n) ->
            System.out.printf(
                "  %s  %6d%s%n",
                java.time.Instant.ofEpochSecond(minute * 60),
                n,
                n == quota ? "  (the quota)" : n > quota ? "  OVER THE QUOTA" : ""));
    long maxPerMinute = perMinute.values().stream().mapToLong(Long::longValue).max().orElse(0);
    long allowed = (long) quota * perMinute.size();
    long recordGrowth = recordsAfterNew - recordsBefore;
    long retryGrowth = recordsAfterRetry - recordsAfterNew;
    System.out.printf(
        "flood-new: %d requests sent (%.0f/s), %d admitted, %d refused with 429 by the new-keys"
            + " quota, %d by the bulkhead or rate limit; the flooder's records grew by %d and its payments by %d"
            + " (the quota allows %d in %d minute(s))%n",
        floodNew.floodSent(),
        floodNew.floodSent() / floodNew.seconds,
        floodNew.admitted.sum(),
        floodNew.refused.sum(),
        floodNew.busy.sum(),
        recordGrowth,
        paymentsAfterNew - paymentsBefore,
        allowed,
        perMinute.size());
    System.out.printf(
        "flood-retry: %d retries of one key (%.0f/s), %d replayed, %d refused by the bulkhead or rate limit; the"
            + " flooder's records grew by %d%n",
        floodRetry.floodSent(),
        floodRetry.floodSent() / floodRetry.seconds,
        floodRetry.admitted.sum(),
        floodRetry.busy.sum(),
        retryGrowth);

    long lost = lost(db);
    System.out.printf(
        "lost: %d of %d acknowledged payments (all tenants) missing their payment row or record%n",
        lost, acknowledged.size());
    double ratioNew = floodNew.othersP99() / reference;
    double ratioRetry = floodRetry.othersP99() / reference;
    double ratio = Math.max(ratioNew, ratioRetry);
    long errors =
        baseline.errors.total()
            + floodNew.errors.total()
            + floodRetry.errors.total()
            + after.errors.total();
    for (Phase p : List.of(baseline, floodNew, floodRetry, after)) {
      p.errors.printIfAny(p.name);
    }
    if (warmupErrors > 0) {
      System.out.println("  (warm-up errors: " + warmupErrors + ")");
    }
    boolean held = maxPerMinute == quota && recordGrowth <= allowed && retryGrowth == 0;
    System.out.printf(
        "RESULT others_p99_ratio=%.2f flooder_admitted_per_min=%d lost=%d ratio_new=%.2f"
            + " ratio_retry=%.2f baseline_p99_ms=%.2f flooder_sent=%d flooder_rps=%.0f"
            + " retry_rps=%.0f record_growth=%d allowed=%d errors=%d%n",
        ratio,
        maxPerMinute,
        lost,
        ratioNew,
        ratioRetry,
        reference / 1e6,
        floodNew.floodSent() + floodRetry.floodSent(),
        floodNew.floodSent() / floodNew.seconds,
        floodRetry.floodSent() / floodRetry.seconds,
        recordGrowth,
        allowed,
        errors);
    return ratio <= 2 && held && lost == 0 && errors == 0 ? 0 : 1;
  }

  /**
   * Waits until the service has sent the events and mails of the payments so far (at most two
   * minutes), so that a phase does not pay for the one before it; the others' traffic pauses.
   */
  private static void drain(DatabaseCounters counters) throws Exception {
    long millis = counters.drainBacklog(Duration.ofMinutes(2));
    System.out.println(
        millis < 0
            ? "  (the service's events and mails did not drain within 2 minutes)"
            : String.format(
                "  (%.1f s for the service's events and mails to drain)", millis / 1e3));
  }

  private long count(Connection db, String sql) throws SQLException {
    try (PreparedStatement s = db.prepareStatement(sql)) {
      s.setString(1, FLOOD_TENANT);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** The flooder's records made during {@code flood}, by minute of the database's clock. */
  private Map<Long, Long> admittedPerMinute(Connection db, Phase flood) throws SQLException {
    Map<Long, Long> perMinute = new TreeMap<>();
    try (PreparedStatement s =
        db.prepareStatement(
            """
            select floor(extract(epoch from created_at) / 60)::bigint as minute, count(*)
              from idemkit_record
             where tenant = ? and idem_key like ?
             group by 1 order by 1
            """)) {
      s.setString(1, FLOOD_TENANT);
      s.setString(2, "flood-" + runId + "-" + flood.name + "-%");
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          perMinute.put(rs.getLong(1), rs.getLong(2));
        }
      }
    }
    return perMinute;
  }

  /** Acknowledged payments whose payment row or idempotency record is not in the database. */
  private long lost(Connection db) throws SQLException {
    Set<String> paymentIds = new HashSet<>();
    Set<String> recordKeys = new HashSet<>();
    try (PreparedStatement s = db.prepareStatement("select tenant_id, id::text from payment");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        paymentIds.add(rs.getString(1) + "/" + rs.getString(2));
      }
    }
    try (PreparedStatement s = db.prepareStatement("select tenant, idem_key from idemkit_record");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        recordKeys.add(rs.getString(1) + "/" + rs.getString(2));
      }
    }
    return acknowledged.stream()
        .filter(
            a ->
                !paymentIds.contains(a.tenant() + "/" + a.paymentId())
                    || !recordKeys.contains(a.tenant() + "/" + a.key()))
        .count();
  }

  // ---------------------------------------------------------------------------------------------
  // Phases

  private enum Flood {
    NONE,
    NEW,
    RETRY
  }

  /** What one phase measured. */
  private static final class Phase {
    final String name;
    double seconds;
    long[] othersNanos = new long[0];

    /** The others' latencies of requests due before and after the flooder's first 429. */
    long[] othersBeforeRefusalNanos = new long[0];

    long[] othersAfterRefusalNanos = new long[0];

    /** When the flooder got its first 429 ({@link System#nanoTime}); none: {@code MAX_VALUE}. */
    final AtomicLong firstRefusal = new AtomicLong(Long.MAX_VALUE);

    final Errors errors = new Errors();
    final LongAdder admitted = new LongAdder();
    final LongAdder refused = new LongAdder();

    /** The flooder's requests refused by the bulkhead or the rate limit ({@link #isBusy}). */
    final LongAdder busy = new LongAdder();

    Cpu cpu = Cpu.ZERO;

    Phase(String name) {
      this.name = name;
    }

    long floodSent() {
      return admitted.sum() + refused.sum() + busy.sum();
    }

    double othersP99() {
      return percentile(0.99);
    }

    double percentile(double p) {
      return percentile(othersNanos, p);
    }

    static double percentile(long[] sorted, double p) {
      if (sorted.length == 0) {
        return Double.NaN;
      }
      return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    void print() {
      System.out.printf(
          "%-12s %7.1f  %13.1f  %7.2f  %7.2f  %6.1f   %14.0f  %5.0f  %5.0f   %5.0f   %.2f / %.2f / %.2f%n",
          name,
          seconds,
          othersNanos.length / seconds,
          percentile(0.50) / 1e6,
          percentile(0.99) / 1e6,
          (othersNanos.length == 0 ? 0 : othersNanos[othersNanos.length - 1]) / 1e6,
          floodSent() / seconds,
          admitted.sum() / seconds,
          refused.sum() / seconds,
          busy.sum() / seconds,
          cpu.driverNanos() / 1e9 / seconds,
          cpu.serviceNanos() / 1e9 / seconds,
          cpu.postgresNanos() / 1e9 / seconds);
    }
  }

  /**
   * Runs the others' steady traffic for {@code length}, with the flood {@code flood} of {@code
   * floodTenant} (new keys) or of retries of {@code retried}.
   */
  private Phase measure(String name, Duration length, Flood flood, String floodTenant, Paid retried)
      throws Exception {
    Phase phase = new Phase(name);
    AtomicBoolean stop = new AtomicBoolean();
    int floodWorkers = flood == Flood.NONE ? 0 : flooders;
    ExecutorService pool = Executors.newFixedThreadPool(others + floodWorkers);
    List<Future<long[][]>> steady = new ArrayList<>();
    List<Future<?>> floods = new ArrayList<>();
    Cpu before = Cpu.now(service);
    long start = System.nanoTime();
    for (int i = 1; i <= others; i++) {
      String tenant = otherTenant(i);
      // Spread over the interval so that the tenants do not send in step.
      long offset = TimeUnit.SECONDS.toNanos(1) / otherRate * (i - 1) / others;
      steady.add(pool.submit(() -> steady(tenant, start + offset, stop, phase)));
    }
    long floodInterval = floodRate > 0 ? TimeUnit.SECONDS.toNanos(1) * floodWorkers / floodRate : 0;
    for (int w = 0; w < floodWorkers; w++) {
      long first = start + (floodInterval * w) / Math.max(1, floodWorkers);
      floods.add(
          pool.submit(
              () -> {
                flood(flood, floodTenant, retried, first, floodInterval, stop, phase);
                return null;
              }));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    LongArray all = new LongArray();
    LongArray beforeRefusal = new LongArray();
    LongArray afterRefusal = new LongArray();
    for (Future<long[][]> f : steady) {
      long[][] latenciesAndDues = f.get();
      for (int i = 0; i < latenciesAndDues[0].length; i++) {
        all.add(latenciesAndDues[0][i]);
        boolean after = latenciesAndDues[1][i] > phase.firstRefusal.get();
        (after ? afterRefusal : beforeRefusal).add(latenciesAndDues[0][i]);
      }
    }
    for (Future<?> f : floods) {
      f.get();
    }
    phase.seconds = (System.nanoTime() - start) / 1e9;
    phase.cpu = Cpu.now(service).minus(before);
    pool.shutdown();
    phase.othersNanos = sorted(all);
    phase.othersBeforeRefusalNanos = sorted(beforeRefusal);
    phase.othersAfterRefusalNanos = sorted(afterRefusal);
    if (name.equals("warm-up")) {
      System.out.printf(
          "  warm-up: others p99 %.2f ms; flood %.0f requests/s (%d admitted, %d refused)%n",
          phase.othersP99() / 1e6,
          phase.floodSent() / phase.seconds,
          phase.admitted.sum(),
          phase.refused.sum());
    } else {
      System.out.printf(
          "  %s: others p99 %.2f ms over %d payments; flood %.0f requests/s; load average %s%n",
          name,
          phase.othersP99() / 1e6,
          phase.othersNanos.length,
          phase.floodSent() / phase.seconds,
          loadAverage());
      if (phase.firstRefusal.get() != Long.MAX_VALUE) {
        System.out.printf(
            "    the flooder's first 429 after %.1f s; the others' p99 before it %.2f ms (%d"
                + " payments), after it %.2f ms (%d payments)%n",
            (phase.firstRefusal.get() - start) / 1e9,
            Phase.percentile(phase.othersBeforeRefusalNanos, 0.99) / 1e6,
            phase.othersBeforeRefusalNanos.length,
            Phase.percentile(phase.othersAfterRefusalNanos, 0.99) / 1e6,
            phase.othersAfterRefusalNanos.length);
      }
    }
    return phase;
  }

  /** The machine's load average (1, 5, 15 minutes): other work on the two cores shows here. */
  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "n/a";
    }
  }

  private static long[] sorted(LongArray values) {
    long[] a = values.toArray();
    Arrays.sort(a);
    return a;
  }

  /**
   * One other tenant: a payment every {@code 1/otherRate} s; answers the latencies, each from when
   * its request was due, and those due times.
   */
  private long[][] steady(String tenant, long first, AtomicBoolean stop, Phase phase)
      throws InterruptedException {
    LongArray latencies = new LongArray();
    LongArray dues = new LongArray();
    long interval = TimeUnit.SECONDS.toNanos(1) / otherRate;
    long due = first;
    while (!stop.get()) {
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      String key = newKey(tenant, phase.name);
      String body = HttpBenchmark.paymentBody(key);
      HttpResponse<String> r = send(tenant, key, body, phase.errors);
      long latency = System.nanoTime() - due;
      due += interval;
      if (r == null) {
        continue;
      }
      if (r.statusCode() != 201 || r.headers().firstValue("Idempotent-Replayed").isPresent()) {
        phase.errors.add(tenant + " status " + r.statusCode(), r.body());
        continue;
      }
      acknowledge(tenant, key, r);
      latencies.add(latency);
      dues.add(due - interval);
    }
    return new long[][] {latencies.toArray(), dues.toArray()};
  }

  private void flood(
      Flood flood,
      String tenant,
      Paid retried,
      long first,
      long interval,
      AtomicBoolean stop,
      Phase phase)
      throws InterruptedException {
    long due = first;
    while (!stop.get()) {
      if (interval > 0) {
        long wait = due - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        due += interval;
      }
      if (flood == Flood.NEW) {
        String key = newKey("flood", phase.name);
        HttpResponse<String> r = send(tenant, key, HttpBenchmark.paymentBody(key), phase.errors);
        if (r == null) {
          continue;
        }
        if (r.statusCode() == 201) {
          acknowledge(tenant, key, r);
          phase.admitted.increment();
        } else if (isBusy(r)) {
          phase.busy.increment();
        } else if (isRefusal(r)) {
          phase.refused.increment();
          phase.firstRefusal.accumulateAndGet(System.nanoTime(), Math::min);
        } else {
          phase.errors.add("flooder status " + r.statusCode(), r.body());
        }
      } else {
        HttpResponse<String> r =
            sendAs(retried.apiKey(), retried.key(), retried.body(), phase.errors);
        if (r == null) {
          continue;
        }
        if (r.statusCode() == 201
            && r.headers().firstValue("Idempotent-Replayed").equals(java.util.Optional.of("true"))
            && r.body().equals(retried.answer())) {
          phase.admitted.increment();
        } else if (isBusy(r)) {
          phase.busy.increment();
        } else {
          phase.errors.add("retry status " + r.statusCode(), r.body());
        }
      }
    }
  }

  /**
   * Refused without being looked at: all the tenant's places taken ({@code --bulkhead}), or over
   * the service's per-tenant rate limit ({@code payments.rate-limit-per-second}, its API gate).
   */
  private static boolean isBusy(HttpResponse<String> r) {
    return r.statusCode() == 429
        && (r.body().contains("running at once") || r.body().contains("RATE_LIMITED"))
        && r.headers().firstValue("Retry-After").isPresent();
  }

  private static boolean isRefusal(HttpResponse<String> r) {
    return r.statusCode() == 429
        && r.body().contains("IDEMPOTENCY_QUOTA_EXCEEDED")
        && r.headers().firstValue("Retry-After").isPresent();
  }

  /** Pays once with a fresh key as {@code tenant}: the key its retries will send. */
  private Paid pay(String tenant) throws Exception {
    String key = newKey(tenant, "retried");
    String body = HttpBenchmark.paymentBody(key);
    Errors errors = new Errors();
    HttpResponse<String> r = send(tenant, key, body, errors);
    if (r == null || r.statusCode() != 201) {
      errors.printIfAny("the first payment of " + tenant);
      throw new IllegalStateException(
          "the first payment of " + tenant + " was not made: " + (r == null ? "" : r.body()));
    }
    acknowledge(tenant, key, r);
    return new Paid(apiKey(tenant), key, body, r.body());
  }

  private void acknowledge(String tenant, String key, HttpResponse<String> r) {
    String location = r.headers().firstValue("Location").orElse("");
    acknowledged.add(
        new Acknowledged(tenant, key, location.substring(location.lastIndexOf('/') + 1)));
  }

  private String newKey(String who, String phase) {
    return who + "-" + runId + "-" + phase + "-" + sequence.incrementAndGet();
  }

  private HttpResponse<String> send(String tenant, String key, String body, Errors errors)
      throws InterruptedException {
    return sendAs(apiKey(tenant), key, body, errors);
  }

  private HttpResponse<String> sendAs(String apiKey, String key, String body, Errors errors)
      throws InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(payments)
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + apiKey)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      errors.add("I/O error " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
      return null;
    }
  }
}
