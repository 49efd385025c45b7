package dev.idemkit.bench;

import dev.idemkit.bench.FloodTraffic.Flood;
import dev.idemkit.bench.FloodTraffic.Paid;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A flood harms no one else (docs/benchmarks.md, {@code bench/flood}): one tenant of the payments
 * service sends {@code POST /v1/payments} as fast as its workers can, while other tenants send
 * ordinary payments at a steady rate each. The service runs as its own process (embedded PostgreSQL
 * in a fresh temporary directory) with one API key per tenant, the quota {@code
 * idemkit.quota.new-keys-per-minute-per-tenant} set to {@code --quota}, {@code
 * idemkit.quota.concurrent-requests-per-tenant} to {@code --bulkhead} and its API gate's {@code
 * payments.rate-limit-per-second} to {@code --rate}; its own refusal pause (1 s) applies to the
 * quota's refusals and the gate's.
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
 * --rate N} requests a second per tenant (default 25; 0: none), {@code --others N} other tenants
 * (default 4), {@code --other-rate N} payments a second per other tenant (default 8), {@code
 * --flooders N} (default 16), {@code --flood-rate N} (default 0), {@code --warmup N} seconds
 * (default 90: the service's JIT compilers were still busy after 40 s on two shared cores), {@code
 * --jar PATH}, {@code --service-arg ARG} (repeatable). Ends with {@code RESULT others_p99_ratio=…
 * flooder_admitted_per_min=… lost=…} and more fields; the exit status is 1 if a check failed.
 */
public final class FloodBenchmark {

  private static final String FLOOD_TENANT = "tenant_flood";
  private static final String WARM_TENANT = "tenant_warm";

  private final FloodTraffic traffic;

  private FloodBenchmark(FloodTraffic traffic) {
    this.traffic = traffic;
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
    int rate = BenchArgs.intArg(args, "--rate", 25);
    if (rate > 0 && (otherRate >= rate || rate * 60L < quota)) {
      System.err.println(
          "bench/flood: --rate "
              + rate
              + "/s must be above --other-rate "
              + otherRate
              + "/s and reach --quota "
              + quota
              + "/min");
      System.exit(2);
    }
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
    extra.add("--payments.rate-limit-per-second=" + rate);
    for (String tenant : tenants(others)) {
      extra.add("--payments.api-keys." + FloodTraffic.apiKey(tenant) + "=" + tenant);
    }
    List<String> more = BenchArgs.stringArgs(args, "--service-arg");
    extra.addAll(more);
    PaymentsServiceProcess.Scratch scratch = PaymentsServiceProcess.Scratch.create("flood");
    int port = scratch.port();
    Path dataDir = scratch.dataDir();
    Path log = scratch.log();
    System.out.printf(
        "bench/flood: starting the payments service on 127.0.0.1:%d (embedded PostgreSQL in %s, log"
            + " %s); per tenant: quota %d new keys a minute, %d requests at once, %s%n",
        port,
        dataDir,
        log,
        quota,
        bulkhead,
        (rate > 0 ? rate + " requests a second" : "no rate limit")
            + (more.isEmpty() ? "" : "; service arguments " + more));
    DatabaseCounters.prepare(dataDir, false);
    Path jarCopy = scratch.copyOf(jar);
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
                    new FloodTraffic(
                        "http://127.0.0.1:" + port,
                        others,
                        otherRate,
                        flooders,
                        floodRate,
                        service))
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
      all.add(FloodTraffic.otherTenant(i));
    }
    return all;
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  private int run(DatabaseCounters counters, int quota, int seconds, int warmup) throws Exception {
    Connection db = counters.serviceDatabase();
    Duration phase = Duration.ofSeconds(seconds);
    System.out.println("warm-up (not counted) ...");
    Paid warmKey = traffic.pay(WARM_TENANT);
    FloodPhase warm =
        traffic.measure("warm-up", Duration.ofSeconds(warmup / 2), Flood.NEW, WARM_TENANT, null);
    FloodPhase warm2 =
        traffic.measure(
            "warm-up", Duration.ofSeconds(warmup - warmup / 2), Flood.RETRY, null, warmKey);
    long warmupErrors = warm.errors.total() + warm2.errors.total();
    drain(counters);

    Paid retried = traffic.pay(FLOOD_TENANT);
    // The baseline ends at the start of a minute: the new-key flood then fills whole quota minutes
    // from their start (the quota counts per minute of the database's clock, this machine's).
    long now = System.currentTimeMillis();
    long floodStart = ((now + seconds * 1000L) / 60_000 + 1) * 60_000 + 500;
    FloodPhase baseline =
        traffic.measure("baseline", Duration.ofMillis(floodStart - now), Flood.NONE, null, null);
    long recordsBefore = count(db, "select count(*) from idemkit_record where tenant = ?");
    long paymentsBefore = count(db, "select count(*) from payment where tenant_id = ?");
    FloodPhase floodNew = traffic.measure("flood-new", phase, Flood.NEW, FLOOD_TENANT, null);
    long recordsAfterNew = count(db, "select count(*) from idemkit_record where tenant = ?");
    long paymentsAfterNew = count(db, "select count(*) from payment where tenant_id = ?");
    drain(counters); // the admitted payments' events and mails: the flood's work, not the retries'
    FloodPhase floodRetry = traffic.measure("flood-retry", phase, Flood.RETRY, null, retried);
    long recordsAfterRetry = count(db, "select count(*) from idemkit_record where tenant = ?");
    drain(counters);
    FloodPhase after = traffic.measure("baseline-2", phase, Flood.NONE, null, null);
    // The flood is compared with the calmer of the two baselines: the larger ratio.
    double reference = Math.min(baseline.othersP99(), after.othersP99());

    System.out.println();
    System.out.println(
        "phase        seconds  others: req/s   p50 ms   p99 ms  max ms   flooder: req/s  201/s "
            + " 429/s  busy/s   CPU: driver / service / PostgreSQL (cores)");
    for (FloodPhase p : List.of(baseline, floodNew, floodRetry, after)) {
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
        lost, traffic.acknowledged().size());
    double ratioNew = floodNew.othersP99() / reference;
    double ratioRetry = floodRetry.othersP99() / reference;
    double ratio = Math.max(ratioNew, ratioRetry);
    long errors =
        baseline.errors.total()
            + floodNew.errors.total()
            + floodRetry.errors.total()
            + after.errors.total();
    for (FloodPhase p : List.of(baseline, floodNew, floodRetry, after)) {
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
  private Map<Long, Long> admittedPerMinute(Connection db, FloodPhase flood) throws SQLException {
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
      s.setString(2, traffic.keyPattern("flood", flood.name));
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
    return traffic.acknowledged().stream()
        .filter(
            a ->
                !paymentIds.contains(a.tenant() + "/" + a.paymentId())
                    || !recordKeys.contains(a.tenant() + "/" + a.key()))
        .count();
  }
}
