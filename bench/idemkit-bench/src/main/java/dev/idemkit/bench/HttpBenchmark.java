package dev.idemkit.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

/**
 * The HTTP benchmark: {@code POST /v1/payments} of the payments service with the idempotency layer
 * ({@code @Idempotent}: a phased operation around the provider charge), against the same payment
 * written the natural way without it ({@code POST /v1/bench/payments-raw}, present only under the
 * Spring profile {@code bench}: the payment and its event in one transaction, the same provider
 * call, the answer recorded in a second transaction; no idempotency record), and replays of keys
 * the layer completed; all over loopback, with a fixed number of workers that each send one request
 * at a time. The provider is the service's own in-process simulator (demo mode), without faults.
 *
 * <p>It starts the service jar as a separate process (its own embedded PostgreSQL in a fresh
 * temporary directory), waits for {@code /actuator/health}, warms up (not counted), then alternates
 * rounds of raw and layer first executions so that drift of the machine hits both alike (raw first
 * in odd rounds, the layer first in even ones), and ends with a replay phase over keys completed in
 * the measured layer rounds. Every answer is checked: anything but a 201 (and, for a replay,
 * anything without {@code Idempotent-Replayed: true} or with another body than the first answer) is
 * an error, counted and printed. Throughput counts correct answers; p50/p99 are over every correct
 * answer's latency (each worker keeps its latencies in a {@code long[]}, sorted at the end).
 *
 * <p>For each phase it also prints what PostgreSQL counted per request ({@link DatabaseCounters}):
 * commits from {@code pg_stat_database} deltas, and statements from {@code pg_stat_statements},
 * which the benchmark has the service's embedded server load (set in the data directory before the
 * service starts; nothing in the service changes). The service's background work (relay, inboxes,
 * workers) is counted with the phase that caused it: a measured phase's counts are read once the
 * service has caught up with the events and mails it left (the wait is not in its throughput), and
 * the next phase starts after that; the idle rate is printed apart and subtracted for "net".
 *
 * <p>The service JVM gets {@code -Dsun.net.httpserver.nodelay=true}: the provider simulator runs on
 * the JDK's {@code com.sun.net.httpserver}, which leaves Nagle's algorithm on, so without it every
 * provider call, raw or layered, waits about 40 ms for a delayed ACK, and throughput at a fixed
 * concurrency measures that wait instead of the work ({@code --provider-nodelay false} shows it).
 *
 * <p>Arguments: {@code --workers N} (default 16), {@code --seconds N} per measured phase (default
 * 10), {@code --rounds N} (default 3), {@code --warmup N} seconds per warm-up phase of raw and of
 * layer (default 45: on two cores the JIT compilers share the CPU with everything else, and with 15
 * s the raw rounds still climbed by a third from the first to the third; replays get a third of
 * it), {@code --jar PATH} (default {@code examples/payments-service/target/payments-service.jar};
 * it is copied to a temporary directory first, so a rebuild during the run cannot pull it away),
 * {@code --service-arg ARG} (repeatable: one more argument for the service, for experiments such as
 * {@code --service-arg --spring.datasource.hikari.maximum-pool-size=8}; printed), {@code
 * --service-jvm-arg ARG} (repeatable: a JVM option for the service), {@code --pg-stat-statements
 * false} (count commits only, without loading {@code pg_stat_statements}). The last lines are
 * {@code FIGURES raw_rps=… layer_rps=… replay_rps=… raw_statements=… layer_statements=…} and {@code
 * RESULT layer_vs_raw=… replay_vs_first=… layer_commits=… raw_commits=… record_writes_per_op=…
 * extra_round_trips=… quota_statements_per_op=…} (commits in the service's database per request,
 * net of the idle service's background rate, the statements too; record rows written, statements on
 * the quota tables and round trips beyond raw's per first execution, each net of the idle rate, see
 * {@link DatabaseCounters}); the exit status is 1 if any request failed.
 */
public final class HttpBenchmark {

  private static final String API_KEY = "sk_test_demo_a";
  private static final String RAW_PATH = "/v1/bench/payments-raw";
  private static final String LAYER_PATH = "/v1/payments";
  private static final String REPLAYED = "Idempotent-Replayed";
  private static final int MAX_REPLAY_KEYS = 200_000;

  private final HttpClient http;
  private final URI raw;
  private final URI layer;
  private final int workers;
  private final Service service;
  private final DatabaseCounters counters;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicInteger phases = new AtomicInteger();
  private long warmupErrors;

  /** Keys the layer completed (with their body and first answer), by worker; replays use them. */
  private final List<List<Completed>> completedByWorker = new ArrayList<>();

  /** What the service's background work alone commits and executes per second, measured idle. */
  private Idle idle;

  private HttpBenchmark(String base, int workers, Service service, DatabaseCounters counters) {
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    this.raw = URI.create(base + RAW_PATH);
    this.layer = URI.create(base + LAYER_PATH);
    this.workers = workers;
    this.service = service;
    this.counters = counters;
    for (int i = 0; i < workers; i++) {
      completedByWorker.add(new ArrayList<>());
    }
  }

  public static void main(String[] args) throws Exception {
    int workers = intArg(args, "--workers", 16);
    int seconds = intArg(args, "--seconds", 10);
    int rounds = intArg(args, "--rounds", 3);
    int warmup = intArg(args, "--warmup", 45);
    Path jar =
        Path.of(stringArg(args, "--jar", "examples/payments-service/target/payments-service.jar"));
    if (!Files.isRegularFile(jar)) {
      System.err.println(
          "bench/http: no service jar at " + jar.toAbsolutePath() + " (bench/http builds it)");
      System.exit(2);
    }
    int port = freePort();
    Path dataDir = Files.createTempDirectory("idemkit-bench-http-pg");
    Path log = Files.createTempFile("idemkit-bench-http-service", ".log");
    System.out.printf(
        "bench/http: starting the payments service on 127.0.0.1:%d (profile bench, embedded"
            + " PostgreSQL in %s, log %s) ...%n",
        port, dataDir, log);
    List<String> jvmArgs = new ArrayList<>();
    if (Boolean.parseBoolean(stringArg(args, "--provider-nodelay", "true"))) {
      // The in-process provider simulator (the JDK's com.sun.net.httpserver) leaves Nagle's
      // algorithm on: its answer goes out in two writes, the second waits for the delayed ACK of
      // the first (40 ms on Linux), and every payment, raw or layered, would wait for that.
      jvmArgs.add("-Dsun.net.httpserver.nodelay=true");
    }
    jvmArgs.addAll(stringArgs(args, "--service-jvm-arg"));
    List<String> extra = stringArgs(args, "--service-arg");
    if (!jvmArgs.isEmpty() || !extra.isEmpty()) {
      System.out.println("bench/http: service JVM options " + jvmArgs + ", arguments " + extra);
    }
    boolean statements = Boolean.parseBoolean(stringArg(args, "--pg-stat-statements", "true"));
    DatabaseCounters.prepare(dataDir, statements);
    Path jarCopy = Files.createTempFile("idemkit-bench-http-service", ".jar");
    Files.copy(jar, jarCopy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Service service = Service.start(jarCopy, port, dataDir, log, jvmArgs, extra);
    Thread hook =
        new Thread(
            () -> {
              service.stop();
              deleteQuietly(dataDir);
              deleteQuietly(jarCopy);
            },
            "bench-http-stop-service");
    Runtime.getRuntime().addShutdownHook(hook);
    Report report;
    DatabaseCounters counters = null;
    try {
      service.awaitHealthy(port, Duration.ofMinutes(3));
      counters = DatabaseCounters.connect(dataDir, statements);
      counters.countRoundTripsOf(service.process.pid());
      System.out.printf(
          "%d workers (one request at a time each) on loopback; warm-up %d s per phase; %d rounds"
              + " of %d s raw + %d s layer; then %d s of replays%n%n",
          workers, warmup, rounds, seconds, seconds, seconds);
      report =
          new HttpBenchmark("http://127.0.0.1:" + port, workers, service, counters)
              .run(rounds, Duration.ofSeconds(seconds), Duration.ofSeconds(warmup));
    } catch (Throwable t) {
      System.err.println("bench/http failed: " + t);
      service.printLogTail(40);
      throw t;
    } finally {
      if (counters != null) {
        counters.close();
      }
      service.stop();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
      deleteQuietly(dataDir);
      deleteQuietly(jarCopy);
    }
    if (report.errors() == 0) {
      Files.deleteIfExists(log);
      System.out.println("bench/http: service stopped, its data directory removed");
    } else {
      System.out.println(
          "bench/http: service stopped, its data directory removed; its log is kept: " + log);
    }
    int exit = report.print();
    System.exit(exit);
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  private Report run(int rounds, Duration round, Duration warmup) throws Exception {
    System.out.println("warm-up (not counted) ...");
    measure(Kind.RAW, warmup, false);
    measure(Kind.LAYER, warmup, false);
    measure(Kind.REPLAY, warmup.dividedBy(3), false);
    completedByWorker.forEach(List::clear); // replays measure keys of the measured rounds only
    idle = measureIdle(Duration.ofSeconds(3));

    List<Phase> raws = new ArrayList<>();
    List<Phase> layers = new ArrayList<>();
    for (int r = 1; r <= rounds; r++) {
      // Odd rounds measure raw first, even rounds the layer first, and each measured phase starts
      // once the service has caught up with the events and mails of the phase before it: a
      // backlog left by one side is billed to neither.
      Phase rawPhase;
      Phase layerPhase;
      if (r % 2 == 1) {
        rawPhase = measureDrained(Kind.RAW, round);
        layerPhase = measureDrained(Kind.LAYER, round);
      } else {
        layerPhase = measureDrained(Kind.LAYER, round);
        rawPhase = measureDrained(Kind.RAW, round);
      }
      raws.add(rawPhase);
      layers.add(layerPhase);
      System.out.printf(
          "round %d/%d: raw %7.0f req/s (p50 %5.2f ms, p99 %6.2f ms)   layer %7.0f req/s (p50 %5.2f"
              + " ms, p99 %6.2f ms)   layer/raw %.2f   other CPU %.0f%%/%.0f%%%n",
          r,
          rounds,
          rawPhase.rps(),
          rawPhase.percentileMillis(0.50),
          rawPhase.percentileMillis(0.99),
          layerPhase.rps(),
          layerPhase.percentileMillis(0.50),
          layerPhase.percentileMillis(0.99),
          layerPhase.rps() / rawPhase.rps(),
          rawPhase.cpu().otherShare(rawPhase.seconds()) * 100,
          layerPhase.cpu().otherShare(layerPhase.seconds()) * 100);
    }
    int keys = completedByWorker.stream().mapToInt(List::size).sum();
    Phase replay = measureDrained(Kind.REPLAY, round);
    System.out.printf(
        "replay:      %7.0f req/s (p50 %5.2f ms, p99 %6.2f ms) over %d keys completed in the"
            + " layer rounds   other CPU %.0f%%%n",
        replay.rps(),
        replay.percentileMillis(0.50),
        replay.percentileMillis(0.99),
        keys,
        replay.cpu().otherShare(replay.seconds()) * 100);
    return new Report(
        Phase.merge("raw", raws),
        Phase.merge("layer", layers),
        replay,
        workers,
        warmupErrors,
        idle,
        counters.countsStatements());
  }

  private enum Kind {
    RAW,
    LAYER,
    REPLAY
  }

  /** A key the layer completed: its key, the body it was sent with, and the body it answered. */
  private record Completed(String key, String body, String answer) {}

  /** The kinds whose first counted phase printed its statements. */
  private final java.util.Set<Kind> profiled = java.util.EnumSet.noneOf(Kind.class);

  /** Each statement the phase ran in the service's database, per request, most frequent first. */
  private static void printStatementsPerRequest(
      String phase, Map<String, double[]> before, Map<String, double[]> after, int requests) {
    if (after.isEmpty() || requests == 0) {
      return;
    }
    System.out.printf(
        "  statements per %s request in the service's database (calls, execution us per"
            + " request):%n",
        phase);
    after.entrySet().stream()
        .map(
            e -> {
              double[] was = before.getOrDefault(e.getKey(), new double[2]);
              return Map.entry(
                  e.getKey(), new double[] {e.getValue()[0] - was[0], e.getValue()[1] - was[1]});
            })
        .filter(e -> e.getValue()[0] > 0)
        .sorted((a, b) -> Double.compare(b.getValue()[1], a.getValue()[1]))
        .limit(25)
        .forEach(
            e -> {
              String sql = e.getKey().trim();
              System.out.printf(
                  "    %6.2f  %7.1f  %s%n",
                  e.getValue()[0] / requests,
                  e.getValue()[1] * 1000 / requests,
                  sql.length() > 100 ? sql.substring(0, 100) : sql);
            });
  }

  /**
   * Waits (at most a minute, not counted) for the service's event and mail backlog to drain, then
   * measures {@code kind}.
   */
  private Phase measureDrained(Kind kind, Duration length) throws Exception {
    long drained = counters.drainBacklog(Duration.ofMinutes(1));
    if (drained < 0) {
      System.out.println("  (the service's event backlog did not drain within a minute)");
    } else if (drained > 1_000) {
      System.out.printf("  (waited %.1f s for the service's event backlog)%n", drained / 1000.0);
    }
    return measure(kind, length, true);
  }

  /** Runs {@code kind} on every worker for {@code length}. */
  private Phase measure(Kind kind, Duration length, boolean counted) throws Exception {
    String name = kind.name().toLowerCase(java.util.Locale.ROOT);
    List<Completed> replayable = new ArrayList<>();
    if (kind == Kind.REPLAY) {
      completedByWorker.forEach(replayable::addAll);
      if (replayable.isEmpty()) {
        throw new IllegalStateException("no completed keys to replay");
      }
    }
    int phaseNo = phases.incrementAndGet(); // merchant references and keys never repeat
    Errors errors = new Errors();
    DatabaseCounters.Counts countsBefore = counters.read();
    boolean profile = counted && profiled.add(kind);
    Map<String, double[]> callsBefore = profile ? counters.callsByStatement() : Map.of();
    long countedFrom = System.nanoTime();
    Cpu before = Cpu.now(service);
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    AtomicBoolean stop = new AtomicBoolean();
    List<Future<long[]>> futures = new ArrayList<>();
    long start = System.nanoTime();
    for (int w = 0; w < workers; w++) {
      int worker = w;
      futures.add(pool.submit(() -> work(kind, phaseNo, worker, stop, replayable, errors)));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    long[][] perWorker = new long[workers][];
    for (int w = 0; w < workers; w++) {
      perWorker[w] = futures.get(w).get();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Cpu after = Cpu.now(service);
    pool.shutdown();
    if (counted) {
      // The phase's own events and mails are its work: counted with it, however long they take.
      counters.drainBacklog(Duration.ofMinutes(1));
    }
    DatabaseCounters.settle(); // what the phase committed, and its events' relay and inboxes
    DatabaseCounters.Counts counts = counters.read().minus(countsBefore);
    double countedSeconds = (System.nanoTime() - countedFrom) / 1e9;
    int n = Arrays.stream(perWorker).mapToInt(a -> a.length).sum();
    if (profile) {
      printStatementsPerRequest(name, callsBefore, counters.callsByStatement(), n);
    }
    long[] latencies = new long[n];
    int at = 0;
    for (long[] a : perWorker) {
      System.arraycopy(a, 0, latencies, at, a.length);
      at += a.length;
    }
    Arrays.sort(latencies);
    Phase phase =
        new Phase(name, seconds, latencies, errors, after.minus(before), counts, countedSeconds);
    if (!counted) {
      warmupErrors += errors.total();
      System.out.printf(
          "  warm-up %-6s %7.0f req/s, %d errors, other CPU %.0f%%%n",
          name, phase.rps(), errors.total(), phase.cpu().otherShare(seconds) * 100);
    }
    errors.printIfAny(name + (counted ? "" : " (warm-up)"));
    return phase;
  }

  /** The service with no requests: what its background work commits and executes per second. */
  private record Idle(double seconds, DatabaseCounters.Counts counts) {
    double commitsPerSecond() {
      return perSecond(DatabaseCounters.Counts::serviceCommits);
    }

    double statementsPerSecond() {
      return perSecond(DatabaseCounters.Counts::serviceStatements);
    }

    double perSecond(ToLongFunction<DatabaseCounters.Counts> counter) {
      return counter.applyAsLong(counts) / seconds;
    }
  }

  private Idle measureIdle(Duration length) throws Exception {
    DatabaseCounters.settle();
    DatabaseCounters.Counts before = counters.read();
    long start = System.nanoTime();
    Thread.sleep(length.toMillis());
    DatabaseCounters.Counts counts = counters.read().minus(before);
    Idle measured = new Idle((System.nanoTime() - start) / 1e9, counts);
    System.out.printf(
        "  idle service: %.1f commits/s, %s in its database (its background work)%n",
        measured.commitsPerSecond(),
        counters.countsStatements()
            ? String.format("%.1f statements/s", measured.statementsPerSecond())
            : "statements not counted");
    return measured;
  }

  /**
   * One worker: one request at a time until {@code stop}; returns the latencies of correct ones.
   */
  private long[] work(
      Kind kind,
      int phaseNo,
      int worker,
      AtomicBoolean stop,
      List<Completed> replayable,
      Errors errors) {
    LongArray latencies = new LongArray();
    List<Completed> completed = completedByWorker.get(worker);
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long seq = 0;
    while (!stop.get()) {
      seq++;
      String reference = "bench-" + runId + "-p" + phaseNo + "-w" + worker + "-" + seq;
      HttpRequest.Builder request =
          HttpRequest.newBuilder()
              .timeout(Duration.ofSeconds(30))
              .header("Authorization", "Bearer " + API_KEY)
              .header("Content-Type", "application/json");
      String body;
      String key = null;
      Completed replay = null;
      switch (kind) {
        case RAW -> {
          body = paymentBody(reference);
          request.uri(raw);
        }
        case LAYER -> {
          body = paymentBody(reference);
          key = "key-" + reference;
          request.uri(layer).header("Idempotency-Key", key);
        }
        default -> {
          replay = replayable.get(random.nextInt(replayable.size()));
          body = replay.body();
          request.uri(layer).header("Idempotency-Key", replay.key());
        }
      }
      request.POST(HttpRequest.BodyPublishers.ofString(body));
      HttpResponse<String> response;
      long t0 = System.nanoTime();
      try {
        response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        errors.add("I/O error " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      long latency = System.nanoTime() - t0;
      String problem = check(kind, response, replay);
      if (problem != null) {
        errors.add(problem, response.statusCode() + " " + response.body());
        continue;
      }
      latencies.add(latency);
      if (kind == Kind.LAYER && completed.size() < MAX_REPLAY_KEYS / workers) {
        completed.add(new Completed(key, body, response.body()));
      }
    }
    return latencies.toArray();
  }

  /** What is wrong with an answer, or null if it is the right one. */
  private static String check(Kind kind, HttpResponse<String> response, Completed replay) {
    if (response.statusCode() != 201) {
      return "status " + response.statusCode();
    }
    if (!response.headers().firstValue("Location").orElse("").startsWith("/v1/payments/")) {
      return "201 without a Location /v1/payments/...";
    }
    Optional<String> replayed = response.headers().firstValue(REPLAYED);
    if (kind == Kind.REPLAY) {
      if (!replayed.equals(Optional.of("true"))) {
        return "replay answered without Idempotent-Replayed: true";
      }
      if (!response.body().equals(replay.answer())) {
        return "replay answered another body than the first execution";
      }
    } else if (replayed.isPresent()) {
      return "first execution answered as a replay";
    }
    return null;
  }

  private static String paymentBody(String merchantReference) {
    return "{\"accountId\":\"acc_bench\",\"amount\":\"10.00\",\"currency\":\"EUR\","
        + "\"merchantReference\":\""
        + merchantReference
        + "\",\"channel\":\"web\"}";
  }

  // ---------------------------------------------------------------------------------------------
  // Figures

  /** One measured phase (or several merged): correct answers' latencies, errors and CPU. */
  private record Phase(
      String name,
      double seconds,
      long[] sortedNanos,
      Errors errors,
      Cpu cpu,
      DatabaseCounters.Counts counts,
      double countedSeconds) {

    double rps() {
      return sortedNanos.length / seconds;
    }

    /**
     * Commits in the service's database per request sent (correct or not), less what the idle
     * service commits in the same time (its background work, at its idle rate).
     */
    double commitsPerRequest(Idle idle) {
      return netPerRequest(DatabaseCounters.Counts::serviceCommits, idle);
    }

    /** Statements in the service's database per request sent, less the idle service's. */
    double statementsPerRequest(Idle idle) {
      return netPerRequest(DatabaseCounters.Counts::serviceStatements, idle);
    }

    /** {@code counter} per request sent, less what the idle service counts in the same time. */
    double netPerRequest(ToLongFunction<DatabaseCounters.Counts> counter, Idle idle) {
      double net = counter.applyAsLong(counts) - idle.perSecond(counter) * countedSeconds;
      return Math.max(0, net) / Math.max(1, requests());
    }

    long requests() {
      return sortedNanos.length + errors.total();
    }

    /** Nearest-rank percentile, in milliseconds. */
    double percentileMillis(double p) {
      if (sortedNanos.length == 0) {
        return Double.NaN;
      }
      int rank = (int) Math.ceil(p * sortedNanos.length);
      return sortedNanos[Math.max(0, rank - 1)] / 1e6;
    }

    static Phase merge(String name, List<Phase> phases) {
      double seconds = phases.stream().mapToDouble(Phase::seconds).sum();
      long[] all = phases.stream().flatMapToLong(p -> Arrays.stream(p.sortedNanos())).toArray();
      Arrays.sort(all);
      Errors errors = new Errors();
      phases.forEach(p -> errors.addAll(p.errors()));
      Cpu cpu = phases.stream().map(Phase::cpu).reduce(Cpu.ZERO, Cpu::plus);
      DatabaseCounters.Counts counts =
          phases.stream()
              .map(Phase::counts)
              .reduce(DatabaseCounters.Counts.ZERO, DatabaseCounters.Counts::plus);
      double countedSeconds = phases.stream().mapToDouble(Phase::countedSeconds).sum();
      return new Phase(name, seconds, all, errors, cpu, counts, countedSeconds);
    }
  }

  private record Report(
      Phase raw,
      Phase layer,
      Phase replay,
      int workers,
      long warmupErrors,
      Idle idle,
      boolean statements) {

    long errors() {
      return raw.errors().total() + layer.errors().total() + replay.errors().total();
    }

    /** Commits and statements per request, as PostgreSQL counted them. */
    void printCounts() {
      System.out.println();
      System.out.println(
          "Per request, as PostgreSQL counted them (pg_stat_database xact_commit deltas"
              + (statements ? "; pg_stat_statements calls" : "; statements not counted")
              + "). Service db: all / net of the idle service's background rate");
      System.out.println(
          "phase      service db: commits all / net  statements all / net"
              + "  BEGIN/COMMIT/SET/SHOW  | provider db: commits  statements");
      for (Phase p : List.of(raw, layer, replay)) {
        double n = Math.max(1, p.requests());
        DatabaseCounters.Counts c = p.counts();
        System.out.printf(
            "%-8s %20.2f / %5.2f %15s %22s  | %20.2f %11s%n",
            p.name(),
            c.serviceCommits() / n,
            p.commitsPerRequest(idle),
            statements
                ? String.format(
                    "%.2f / %.2f", c.serviceStatements() / n, p.statementsPerRequest(idle))
                : "n/a",
            statements ? String.format("%.2f", c.serviceTransactionControl() / n) : "n/a",
            c.providerCommits() / n,
            statements ? String.format("%.2f", c.providerStatements() / n) : "n/a");
      }
      System.out.printf(
          "  \"all\" includes the service's background work (outbox relay, inboxes, workers);"
              + " idle it ran %.1f commits/s%s, subtracted over each phase's counted time for"
              + " \"net\"%n",
          idle.commitsPerSecond(),
          statements ? String.format(" and %.1f statements/s", idle.statementsPerSecond()) : "");
      System.out.println(
          "  raw: the payment and its event in one transaction, the provider call, its answer"
              + " recorded in a second; layer: the same two transactions, each with one write of"
              + " the record, and the checks before the first");
      System.out.println();
      System.out.println(
          "Per request, net of the idle service: record rows written (idemkit_record and its"
              + " history, pg_stat_user_tables), statements on the quota tables, round trips to"
              + " PostgreSQL (TCP data segments the service sent, ss -ti)");
      System.out.println("phase     record writes  quota statements  round trips");
      for (Phase p : List.of(raw, layer, replay)) {
        System.out.printf(
            "%-8s %14.2f %17s %12s%n",
            p.name(),
            p.netPerRequest(DatabaseCounters.Counts::recordWrites, idle),
            statements
                ? String.format(
                    "%.2f", p.netPerRequest(DatabaseCounters.Counts::quotaStatements, idle))
                : "n/a",
            roundTripsCounted()
                ? String.format("%.2f", p.netPerRequest(DatabaseCounters.Counts::roundTrips, idle))
                : "n/a");
      }
    }

    /** Whether the round trips were counted ({@code ss} found the service's sockets). */
    boolean roundTripsCounted() {
      return idle.counts().roundTrips() >= 0 && layer.counts().roundTrips() > 0;
    }

    /** Prints the figures and the RESULT line; returns the exit status. */
    int print() {
      double layerVsRaw = layer.rps() / raw.rps();
      double replayVsFirst = replay.rps() / layer.rps();
      System.out.println();
      System.out.printf(
          "POST /v1/payments over loopback, %d workers; raw and layer: all rounds together%n",
          workers);
      System.out.println(
          "phase     requests  errors     req/s   p50 ms   p99 ms  | CPU us/request: driver"
              + "  service JVM  PostgreSQL  other | machine busy  of it other");
      for (Phase p : List.of(raw, layer, replay)) {
        double n = Math.max(1, p.requests());
        Cpu c = p.cpu();
        System.out.printf(
            "%-8s %9d %7d %9.0f %8.2f %8.2f  | %22.0f %12.0f %11.0f %6.0f | %11.0f%% %10.0f%%%n",
            p.name(),
            p.requests(),
            p.errors().total(),
            p.rps(),
            p.percentileMillis(0.50),
            p.percentileMillis(0.99),
            c.driverNanos() / 1e3 / n,
            c.serviceNanos() / 1e3 / n,
            c.postgresNanos() / 1e3 / n,
            c.otherNanos() / 1e3 / n,
            c.busyShare(p.seconds()) * 100,
            c.otherShare(p.seconds()) * 100);
      }
      System.out.println(
          "  raw    = POST /v1/bench/payments-raw: the same payment, its events and provider"
              + " call in two transactions, no idempotency record, no key");
      System.out.println(
          "  layer  = POST /v1/payments with a new Idempotency-Key: first executions");
      System.out.println(
          "  replay = POST /v1/payments again with a completed key and its body (all answered"
              + " Idempotent-Replayed: true)");
      System.out.println(
          "  other  = the kernel's own work (softirqs of loopback) and any other process on the"
              + " machine");
      for (Phase p : List.of(raw, layer, replay)) {
        if (p.cpu().otherShare(p.seconds()) > 0.10) {
          System.out.printf(
              "WARNING: during %s, %.0f%% of the machine went to neither the driver, the service"
                  + " nor its PostgreSQL (other processes?): the figures are disturbed%n",
              p.name(), p.cpu().otherShare(p.seconds()) * 100);
        }
      }
      System.out.println();
      System.out.printf("layer / raw    = %.2f   (target >= 0.90)%n", layerVsRaw);
      System.out.printf("replay / first = %.2f   (target >= 2.00)%n", replayVsFirst);
      long errors = errors();
      if (errors > 0) {
        System.out.printf(
            "ERRORS: %d requests failed (raw %d, layer %d, replay %d); see above. The figures"
                + " count correct answers only.%n",
            errors, raw.errors().total(), layer.errors().total(), replay.errors().total());
      } else {
        System.out.println(
            "errors: none in the measured phases (every first answer a 201, every replay a"
                + " replayed 201)");
      }
      if (warmupErrors > 0) {
        System.out.printf(
            "errors during the warm-up (not counted, shown above): %d%n", warmupErrors);
      }
      printCounts();
      double layerCommits = layer.commitsPerRequest(idle);
      double rawCommits = raw.commitsPerRequest(idle);
      System.out.printf(
          "FIGURES raw_rps=%.0f layer_rps=%.0f replay_rps=%.0f raw_statements=%s"
              + " layer_statements=%s%n",
          raw.rps(),
          layer.rps(),
          replay.rps(),
          statements ? String.format("%.1f", raw.statementsPerRequest(idle)) : "n/a",
          statements ? String.format("%.1f", layer.statementsPerRequest(idle)) : "n/a");
      double recordWrites = layer.netPerRequest(DatabaseCounters.Counts::recordWrites, idle);
      String extraRoundTrips =
          roundTripsCounted()
              ? String.format(
                  "%.2f",
                  layer.netPerRequest(DatabaseCounters.Counts::roundTrips, idle)
                      - raw.netPerRequest(DatabaseCounters.Counts::roundTrips, idle))
              : "n/a";
      String quotaStatements =
          statements
              ? String.format(
                  "%.2f", layer.netPerRequest(DatabaseCounters.Counts::quotaStatements, idle))
              : "n/a";
      System.out.printf(
          "RESULT layer_vs_raw=%.2f replay_vs_first=%.2f layer_commits=%.1f raw_commits=%.1f"
              + " record_writes_per_op=%.2f extra_round_trips=%s quota_statements_per_op=%s%n",
          layerVsRaw,
          replayVsFirst,
          layerCommits,
          rawCommits,
          recordWrites,
          extraRoundTrips,
          quotaStatements);
      System.out.flush();
      return errors > 0 ? 1 : 0;
    }
  }

  /** Failed requests by kind, with a few examples. */
  private static final class Errors {
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> examples = new ConcurrentLinkedQueue<>();
    private final AtomicInteger exampleCount = new AtomicInteger();

    void add(String kind, String example) {
      counts.computeIfAbsent(kind, k -> new LongAdder()).increment();
      if (exampleCount.incrementAndGet() <= 5) {
        String text = example.length() > 300 ? example.substring(0, 300) + "..." : example;
        examples.add(kind + ": " + text);
      }
    }

    void addAll(Errors other) {
      other.counts.forEach((k, v) -> counts.computeIfAbsent(k, x -> new LongAdder()).add(v.sum()));
      examples.addAll(other.examples);
    }

    long total() {
      return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    void printIfAny(String phase) {
      if (total() == 0) {
        return;
      }
      System.out.printf("  ERRORS in %s: %d%n", phase, total());
      counts.entrySet().stream()
          .sorted(Map.Entry.comparingByKey())
          .forEach(e -> System.out.printf("    %6d x %s%n", e.getValue().sum(), e.getKey()));
      examples.forEach(e -> System.out.println("    e.g. " + e));
    }
  }

  /**
   * CPU spent by the load driver (this JVM), the service JVM, its PostgreSQL (postmaster and
   * backends) and the whole machine; what is left is the kernel's own work (softirqs) and any other
   * process on the machine.
   */
  private record Cpu(long driverNanos, long serviceNanos, long postgresNanos, long machineNanos) {
    static final Cpu ZERO = new Cpu(0, 0, 0, 0);

    static Cpu now(Service service) {
      long driver =
          ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
              .getProcessCpuTime();
      return new Cpu(driver, service.cpuNanos(), service.postgresCpuNanos(), machineBusyNanos());
    }

    Cpu minus(Cpu o) {
      return new Cpu(
          driverNanos - o.driverNanos,
          serviceNanos - o.serviceNanos,
          postgresNanos - o.postgresNanos,
          machineNanos - o.machineNanos);
    }

    Cpu plus(Cpu o) {
      return new Cpu(
          driverNanos + o.driverNanos,
          serviceNanos + o.serviceNanos,
          postgresNanos + o.postgresNanos,
          machineNanos + o.machineNanos);
    }

    /** The machine minus the driver, the service and PostgreSQL. */
    long otherNanos() {
      return Math.max(0, machineNanos - driverNanos - serviceNanos - postgresNanos);
    }

    double busyShare(double seconds) {
      return machineNanos / 1e9 / seconds / Runtime.getRuntime().availableProcessors();
    }

    double otherShare(double seconds) {
      return otherNanos() / 1e9 / seconds / Runtime.getRuntime().availableProcessors();
    }

    /** Busy time of the whole machine from /proc/stat (zero where there is none). */
    private static long machineBusyNanos() {
      try {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long busy = 0;
        // user nice system idle iowait irq softirq; not steal, not guest (counted in user)
        for (int i = 1; i < f.length && i <= 7; i++) {
          if (i != 4 && i != 5) {
            busy += Long.parseLong(f[i]);
          }
        }
        return busy * 10_000_000L; // USER_HZ = 100
      } catch (Exception e) {
        return 0;
      }
    }
  }

  /** A growable long[]. */
  private static final class LongArray {
    private long[] values = new long[1 << 14];
    private int size;

    void add(long v) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = v;
    }

    long[] toArray() {
      return Arrays.copyOf(values, size);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The service process

  /** The payments service jar in its own JVM, with its embedded PostgreSQL. */
  private static final class Service {
    private final Process process;
    private final Path dataDir;
    private final Path log;
    private final AtomicBoolean stopped = new AtomicBoolean();

    private Service(Process process, Path dataDir, Path log) {
      this.process = process;
      this.dataDir = dataDir;
      this.log = log;
    }

    static Service start(
        Path jar, int port, Path dataDir, Path log, List<String> jvmArgs, List<String> extra)
        throws IOException {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<String> command = new ArrayList<>(List.of(java));
      command.addAll(jvmArgs);
      command.addAll(
          List.of(
              "-jar",
              jar.toAbsolutePath().toString(),
              "--server.port=" + port,
              "--server.address=127.0.0.1",
              "--spring.profiles.active=bench",
              "--idemkit.embedded.data-dir=" + dataDir,
              "--logging.level.root=warn"));
      command.addAll(extra);
      ProcessBuilder builder = new ProcessBuilder(command);
      builder.redirectErrorStream(true).redirectOutput(log.toFile());
      return new Service(builder.start(), dataDir, log);
    }

    void awaitHealthy(int port, Duration timeout) throws Exception {
      HttpClient client =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(2))
              .build();
      HttpRequest health =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
              .timeout(Duration.ofSeconds(5))
              .GET()
              .build();
      long start = System.nanoTime();
      long deadline = start + timeout.toNanos();
      long nextReport = start + TimeUnit.SECONDS.toNanos(5);
      String last = "no answer yet";
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "the service exited with status " + process.exitValue() + " before it was UP");
        }
        try {
          HttpResponse<String> r = client.send(health, HttpResponse.BodyHandlers.ofString());
          last = r.statusCode() + " " + r.body();
          if (r.statusCode() == 200 && r.body().contains("\"status\":\"UP\"")) {
            System.out.printf(
                "  service UP after %.1f s (pid %d)%n",
                (System.nanoTime() - start) / 1e9, process.pid());
            return;
          }
        } catch (IOException notYet) {
          last = notYet.getClass().getSimpleName();
        }
        if (System.nanoTime() >= nextReport) {
          System.out.printf(
              "  waiting for /actuator/health: %.0f s (%s)%n",
              (System.nanoTime() - start) / 1e9, last);
          nextReport += TimeUnit.SECONDS.toNanos(5);
        }
        Thread.sleep(250);
      }
      throw new IllegalStateException("the service was not UP after " + timeout + ": " + last);
    }

    long cpuNanos() {
      return cpuNanos(process.toHandle());
    }

    /** The postmaster and every backend it has now. */
    long postgresCpuNanos() {
      return postmaster()
          .map(pm -> cpuNanos(pm) + pm.descendants().mapToLong(Service::cpuNanos).sum())
          .orElse(0L);
    }

    private static long cpuNanos(ProcessHandle p) {
      return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /** Stops the service (SIGTERM, then SIGKILL) and any PostgreSQL it left running. */
    void stop() {
      if (!stopped.compareAndSet(false, true)) {
        return;
      }
      List<ProcessHandle> children = process.descendants().toList();
      process.destroy();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
      children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
      postmaster().filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroy);
    }

    /** The embedded PostgreSQL's postmaster, from its pid file, if there is one. */
    private Optional<ProcessHandle> postmaster() {
      try (Stream<Path> files = Files.walk(dataDir, 2)) {
        return files
            .filter(f -> f.getFileName().toString().equals("postmaster.pid"))
            .findFirst()
            .flatMap(
                f -> {
                  try {
                    return ProcessHandle.of(Long.parseLong(Files.readAllLines(f).get(0).trim()));
                  } catch (Exception e) {
                    return Optional.empty();
                  }
                });
      } catch (IOException e) {
        return Optional.empty();
      }
    }

    void printLogTail(int lines) {
      try {
        List<String> all = Files.readAllLines(log);
        System.err.println("--- last lines of the service log " + log + " ---");
        all.subList(Math.max(0, all.size() - lines), all.size()).forEach(System.err::println);
      } catch (IOException e) {
        System.err.println("(no service log: " + e.getMessage() + ")");
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static void deleteQuietly(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files
          .sorted(Comparator.reverseOrder())
          .forEach(
              f -> {
                try {
                  Files.deleteIfExists(f);
                } catch (IOException ignored) {
                  // best effort
                }
              });
    } catch (IOException ignored) {
      // best effort
    }
  }

  private static int intArg(String[] args, String name, int fallback) {
    return Integer.parseInt(stringArg(args, name, String.valueOf(fallback)));
  }

  private static List<String> stringArgs(String[] args, String name) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        values.add(args[++i]);
      }
    }
    return values;
  }

  private static String stringArg(String[] args, String name, String fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
