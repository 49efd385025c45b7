package dev.idemkit.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * How {@link StoreBenchmark} runs a variant: on every worker for a while, counting requests and
 * where the machine's CPU went (the JVM, its worker threads, the PostgreSQL server), and with
 * {@code --profile} the statements each run sent.
 */
final class StoreRuns {

  private final DataSource dataSource;
  private final int workers;

  StoreRuns(DataSource dataSource, int workers) {
    this.dataSource = dataSource;
    this.workers = workers;
  }

  /** With --profile: the statements each measured run sent, per request. */
  boolean profile;

  void resetStatements() {
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

  void printStatements(String name, long requests) {
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

  @FunctionalInterface
  interface Request {
    void run() throws Exception;
  }

  /**
   * Throughput and where the machine's CPU went, per request; of the JVM's, what the worker threads
   * themselves spent and allocated (the request's own work, without the collector and the
   * compiler).
   */
  record Run(
      double rps, double jvmMicros, double otherMicros, double workerMicros, double workerBytes) {}

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

  private final Map<String, List<Run>> runs = new java.util.LinkedHashMap<>();

  /** Runs {@code request} on every worker for {@code length}; returns requests per second. */
  double measure(String name, Duration length, Request request) throws Exception {
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
  Optional<ProcessHandle> postmaster = Optional.empty();

  void findPostmaster() {
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
  long postgresCpuNanos() {
    return postmaster
        .map(pm -> cpuNanos(pm) + pm.descendants().mapToLong(StoreRuns::cpuNanos).sum())
        .orElse(0L);
  }

  static long cpuNanos(ProcessHandle p) {
    return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }

  static long jvmCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Busy ticks of the whole machine from /proc/stat (zero where there is none). */
  static long[] machineCpuTicks() {
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

  void printCpu(String name, String roundTrips) {
    List<Run> measured = runs.get(name);
    List<Run> counted = measured.size() > 1 ? measured.subList(1, measured.size()) : measured;
    double jvm = counted.stream().mapToDouble(Run::jvmMicros).average().orElse(0);
    double other = counted.stream().mapToDouble(Run::otherMicros).average().orElse(0);
    double worker = counted.stream().mapToDouble(Run::workerMicros).average().orElse(0);
    double bytes = counted.stream().mapToDouble(Run::workerBytes).average().orElse(0);
    System.out.printf(
        "  %-16s %-44s %6.0f %6.0f %8.0f %8.0f%n", name, roundTrips, jvm, worker, bytes, other);
  }
}
