package dev.idemkit.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * The figures of {@link HttpBenchmark}: a measured phase, the idle service's rate, the report with
 * its FIGURES and RESULT lines, failed requests, CPU shares and the statements per request.
 */
final class HttpFigures {

  private HttpFigures() {}

  /** Each statement the phase ran in the service's database, per request, most frequent first. */
  static void printStatementsPerRequest(
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

  /** The service with no requests: what its background work commits and executes per second. */
  record Idle(double seconds, DatabaseCounters.Counts counts) {
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

  /** One measured phase (or several merged): correct answers' latencies, errors and CPU. */
  record Phase(
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

  record Report(
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
  static final class Errors {
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
  record Cpu(long driverNanos, long serviceNanos, long postgresNanos, long machineNanos) {
    static final Cpu ZERO = new Cpu(0, 0, 0, 0);

    static Cpu now(PaymentsServiceProcess service) {
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
  static final class LongArray {
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
}
