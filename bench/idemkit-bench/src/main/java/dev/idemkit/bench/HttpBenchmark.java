package dev.idemkit.bench;

import dev.idemkit.bench.HttpFigures.Cpu;
import dev.idemkit.bench.HttpFigures.Errors;
import dev.idemkit.bench.HttpFigures.Idle;
import dev.idemkit.bench.HttpFigures.LongArray;
import dev.idemkit.bench.HttpFigures.Phase;
import dev.idemkit.bench.HttpFigures.Report;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
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
  private final PaymentsServiceProcess service;
  private final DatabaseCounters counters;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicInteger phases = new AtomicInteger();
  private long warmupErrors;

  /** Keys the layer completed (with their body and first answer), by worker; replays use them. */
  private final List<List<Completed>> completedByWorker = new ArrayList<>();

  /** What the service's background work alone commits and executes per second, measured idle. */
  private Idle idle;

  private HttpBenchmark(
      String base, int workers, PaymentsServiceProcess service, DatabaseCounters counters) {
    this.http = PaymentsServiceProcess.client();
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
    int workers = BenchArgs.intArg(args, "--workers", 16);
    int seconds = BenchArgs.intArg(args, "--seconds", 10);
    int rounds = BenchArgs.intArg(args, "--rounds", 3);
    int warmup = BenchArgs.intArg(args, "--warmup", 45);
    Path jar =
        Path.of(
            BenchArgs.stringArg(
                args, "--jar", "examples/payments-service/target/payments-service.jar"));
    if (!Files.isRegularFile(jar)) {
      System.err.println(
          "bench/http: no service jar at " + jar.toAbsolutePath() + " (bench/http builds it)");
      System.exit(2);
    }
    PaymentsServiceProcess.Scratch scratch = PaymentsServiceProcess.Scratch.create("http");
    int port = scratch.port();
    Path dataDir = scratch.dataDir();
    Path log = scratch.log();
    System.out.printf(
        "bench/http: starting the payments service on 127.0.0.1:%d (profile bench, embedded"
            + " PostgreSQL in %s, log %s) ...%n",
        port, dataDir, log);
    List<String> jvmArgs = new ArrayList<>();
    if (Boolean.parseBoolean(BenchArgs.stringArg(args, "--provider-nodelay", "true"))) {
      // The in-process provider simulator (the JDK's com.sun.net.httpserver) leaves Nagle's
      // algorithm on: its answer goes out in two writes, the second waits for the delayed ACK of
      // the first (40 ms on Linux), and every payment, raw or layered, would wait for that.
      jvmArgs.add("-Dsun.net.httpserver.nodelay=true");
    }
    jvmArgs.addAll(BenchArgs.stringArgs(args, "--service-jvm-arg"));
    List<String> extra = BenchArgs.stringArgs(args, "--service-arg");
    if (!jvmArgs.isEmpty() || !extra.isEmpty()) {
      System.out.println("bench/http: service JVM options " + jvmArgs + ", arguments " + extra);
    }
    boolean statements =
        Boolean.parseBoolean(BenchArgs.stringArg(args, "--pg-stat-statements", "true"));
    DatabaseCounters.prepare(dataDir, statements);
    Path jarCopy = scratch.copyOf(jar);
    PaymentsServiceProcess service =
        PaymentsServiceProcess.start(jarCopy, port, dataDir, log, jvmArgs, extra);
    Thread hook =
        new Thread(
            () -> {
              service.stop();
              PaymentsServiceProcess.deleteQuietly(dataDir);
              PaymentsServiceProcess.deleteQuietly(jarCopy);
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
      PaymentsServiceProcess.deleteQuietly(dataDir);
      PaymentsServiceProcess.deleteQuietly(jarCopy);
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
        rawPhase = measure(Kind.RAW, round, true);
        layerPhase = measure(Kind.LAYER, round, true);
      } else {
        layerPhase = measure(Kind.LAYER, round, true);
        rawPhase = measure(Kind.RAW, round, true);
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
    Phase replay = measure(Kind.REPLAY, round, true);
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
      // The phase's own events and mails are its work: counted with it, however long they take
      // (not in its throughput); the next phase then starts with no backlog.
      long drained = counters.drainBacklog(Duration.ofMinutes(1));
      if (drained < 0) {
        System.out.println("  (the service's event backlog did not drain within a minute)");
      } else if (drained > 1_000) {
        System.out.printf("  (waited %.1f s for the service's event backlog)%n", drained / 1000.0);
      }
    }
    DatabaseCounters.settle(); // what the phase committed, and its events' relay and inboxes
    DatabaseCounters.Counts counts = counters.read().minus(countsBefore);
    double countedSeconds = (System.nanoTime() - countedFrom) / 1e9;
    int n = Arrays.stream(perWorker).mapToInt(a -> a.length).sum();
    if (profile) {
      HttpFigures.printStatementsPerRequest(name, callsBefore, counters.callsByStatement(), n);
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

  private Idle measureIdle(Duration length) throws Exception {
    // The warm-up's events and mails are no idle work: the idle rate is measured once they are
    // done.
    counters.drainBacklog(Duration.ofMinutes(1));
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

  /** A payment of 10.00 EUR with {@code merchantReference}, as both benchmarks send it. */
  static String paymentBody(String merchantReference) {
    return "{\"accountId\":\"acc_bench\",\"amount\":\"10.00\",\"currency\":\"EUR\","
        + "\"merchantReference\":\""
        + merchantReference
        + "\",\"channel\":\"web\"}";
  }
}
