package dev.idemkit.bench;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.outbox.EmbeddedTransport;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.spi.MessageReceiver;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * Events across a boundary, end to end, on PostgreSQL (synchronous commits):
 *
 * <ol>
 *   <li><b>direct</b> (baseline): writers commit a payment row and its two ledger rows (debit,
 *       credit) in one transaction, as a service without events would;
 *   <li><b>append</b>: the writers' half alone: a payment row and its {@code PaymentCompleted}
 *       event (outbox append) per transaction, nothing relayed;
 *   <li><b>saturated</b>: writers commit a payment row and its {@code PaymentCompleted} event
 *       (outbox append) as fast as they can; relays send the events through the embedded transport
 *       to the ledger consumer, which writes the same two ledger rows for the whole batch in its
 *       inbox transaction. Events per second = events consumed / (last inbox commit − first payment
 *       commit);
 *   <li><b>paced</b>: the same at half the saturated rate; latency from each payment's commit to
 *       its inbox commit (p50, p99).
 * </ol>
 *
 * <p>Direct and saturated alternate for {@code --rounds} rounds (default 3; the relays and the
 * consumer run during the saturated phases only), and the figures are their means; then the
 * append-only phase, and the paced one at half the mean saturated rate.
 *
 * <p>Arguments: {@code --seconds N} per phase (default 10), {@code --rounds N} (default 3), {@code
 * --warmup N} seconds of direct and of saturated before the rounds, not counted (default 10: the
 * relay's and the consumer's per-round code is compiled late, and 3 s left the first round a third
 * slower than the third), {@code --writers N} (default 8), {@code --relays N} relay threads
 * (default 2), {@code --batch N} events per relay round (default 500), {@code --poll-ms N} how long
 * a relay waits after a round that found fewer than a batch (default 5; the library's default is
 * 50), {@code --profile} (the embedded server with {@code pg_stat_statements}: the first round's
 * and the append-only phase's statements by database time, with their WAL). Ends with {@code RESULT
 * events_per_s=<n> p99_ms=<n> vs_direct=<ratio>}.
 */
public final class EventsBenchmark {

  private final DataSource ds;
  private final Outbox outbox;
  private final int writers;
  private final int relays;
  private final int batch;
  private final Duration poll;
  private final Map<UUID, Long> committedAt = new ConcurrentHashMap<>();
  private final LongAdder consumed = new LongAdder();
  private final AtomicLong lastConsumedAt = new AtomicLong();
  private final List<Long> latencyLog = java.util.Collections.synchronizedList(new ArrayList<>());

  private EventsBenchmark(DataSource ds, int writers, int relays, int batch, Duration poll) {
    this.ds = ds;
    this.outbox = Outbox.create(ds);
    this.writers = writers;
    this.relays = relays;
    this.batch = batch;
    this.poll = poll;
  }

  public static void main(String[] args) throws Exception {
    int seconds = intArg(args, "--seconds", 10);
    int rounds = intArg(args, "--rounds", 3);
    int warmup = intArg(args, "--warmup", 10);
    int writers = intArg(args, "--writers", 8);
    int relays = intArg(args, "--relays", 2);
    int batch = intArg(args, "--batch", 500);
    Duration poll = Duration.ofMillis(intArg(args, "--poll-ms", 5));
    boolean profile = Arrays.asList(args).contains("--profile");
    int pool = writers + relays * 2 + 4;
    String url = System.getenv("IDEMKIT_JDBC_URL");
    System.out.println("bench/events: starting PostgreSQL ...");
    Path dir = Files.createTempDirectory("idemkit-bench-pg");
    EmbeddedPostgres profiled = null;
    if (profile && (url == null || url.isBlank())) {
      // The same embedded server, with pg_stat_statements loaded: where the database's time goes.
      profiled = DatabaseCounters.embeddedWithStatements(dir);
    }
    try (IdemkitDatabase db =
        profiled != null
            ? IdemkitDatabase.connect(
                profiled.getJdbcUrl("postgres", "postgres"), "postgres", null, pool)
            : url != null && !url.isBlank()
                ? IdemkitDatabase.fromEnvironment(pool)
                : IdemkitDatabase.embedded(dir, pool)) {
      System.out.printf(
          "Database: %s; %d writers, %d relay threads, batches of %d, a relay waits %d ms after"
              + " a round that found fewer, %d s per phase, %d rounds%n%n",
          db.description(), writers, relays, batch, poll.toMillis(), seconds, rounds);
      EventsBenchmark bench = new EventsBenchmark(db.dataSource(), writers, relays, batch, poll);
      bench.profile = profile;
      bench.run(Duration.ofSeconds(seconds), rounds, Duration.ofSeconds(warmup));
    } finally {
      if (profiled != null) {
        profiled.close();
      }
      try (Stream<Path> paths = Files.walk(dir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private boolean profile;

  /** With --profile: the statements that took the database's time in the last phase. */
  private void printProfile(String phase) {
    if (!profile) {
      return;
    }
    System.out.println("  where the database's time went (" + phase + ", pg_stat_statements):");
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select calls, rows, total_exec_time, mean_exec_time, wal_bytes / nullif(calls, 0), plans,"
                    + " regexp_replace(left(query, 90), '\\s+', ' ', 'g')"
                    + " from pg_stat_statements order by total_exec_time desc limit 12")) {
      while (rs.next()) {
        System.out.printf(
            "    %8d calls %9d rows %7.0f ms %7.3f ms each %7d B WAL each %6d plans  %s%n",
            rs.getLong(1),
            rs.getLong(2),
            rs.getDouble(3),
            rs.getDouble(4),
            rs.getLong(5),
            rs.getLong(6),
            rs.getString(7));
      }
    } catch (Exception e) {
      System.out.println("    (no pg_stat_statements: " + e.getMessage() + ")");
    }
    // The tables' own counters: sequential scans (a plan that reads the whole table), index
    // scans, and how many updates were HOT (no new index entries).
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd,"
                    + " n_tup_hot_upd, n_tup_del from pg_stat_user_tables"
                    + " where n_tup_ins + n_tup_upd + n_tup_del > 0 order by relname")) {
      while (rs.next()) {
        System.out.printf(
            "    %-26s %6d seq scans (%,d rows read) %8d index scans; %,d inserted, %,d updated"
                + " (%,d HOT), %,d deleted%n",
            rs.getString(1),
            rs.getLong(2),
            rs.getLong(3),
            rs.getLong(4),
            rs.getLong(5),
            rs.getLong(6),
            rs.getLong(7),
            rs.getLong(8));
      }
    } catch (Exception e) {
      System.out.println("    (no table counters: " + e.getMessage() + ")");
    }
  }

  private void resetProfile() {
    if (profile) {
      execute("create extension if not exists pg_stat_statements");
      execute("select pg_stat_statements_reset()");
      execute("select pg_stat_reset()");
    }
  }

  private void run(Duration phase, int rounds, Duration warmup) throws Exception {
    OutboxSchema.migrate(ds);
    execute(
        """
        create table if not exists bench_payment (id uuid primary key, amount numeric(19,4));
        create table if not exists bench_ledger (
            entry_type text not null, source_payment_id uuid not null, account_id text not null,
            amount numeric(19,4) not null, unique (entry_type, source_payment_id));
        """);

    System.out.printf("warm-up, %d s of each (not counted) ...%n", warmup.toSeconds());
    direct(warmup);
    reset();
    saturated(warmup);
    reset();

    // Rounds alternate the baseline and the saturated flow, so that drift of the machine (it
    // moved the direct rate by a third between runs a minute apart) hits both alike.
    double directTotal = 0;
    double committedTotal = 0;
    double consumedTotal = 0;
    for (int r = 1; r <= rounds; r++) {
      boolean profileThis = r == 1;
      if (profileThis) {
        resetProfile();
      }
      double direct = direct(phase);
      if (profileThis) {
        printProfile("direct");
      }
      reset();
      if (profileThis) {
        resetProfile();
      }
      Result saturated = saturated(phase);
      if (profileThis) {
        printProfile("saturated");
      }
      reset();
      directTotal += direct;
      committedTotal += saturated.appendedPerS;
      consumedTotal += saturated.consumedPerS;
      System.out.printf(
          "round %d/%d: direct %,7.0f payments/s   saturated %,7.0f events/s committed, %,7.0f"
              + " commit→inbox commit (p50 %.1f ms, p99 %.1f ms)   saturated/direct %.2f%n",
          r,
          rounds,
          direct,
          saturated.appendedPerS,
          saturated.consumedPerS,
          saturated.p50,
          saturated.p99,
          saturated.consumedPerS / direct);
    }
    double direct = directTotal / rounds;
    double consumed = consumedTotal / rounds;

    // The writers' half alone: payment row and outbox append, nothing relayed.
    resetProfile();
    double appendOnly = append(phase, 0, false).appendedPerS;
    printProfile("append only");
    reset();
    double half = consumed / 2;
    Result paced = relayed(() -> appendAndConsume(phase, half));

    System.out.println();
    System.out.printf(
        "direct:    %,.0f payments/s (payment + 2 ledger rows, one commit; mean of %d rounds)%n",
        direct, rounds);
    System.out.printf(
        "append:    %,.0f payments/s (payment + outbox append, one commit; no relay running)%n",
        appendOnly);
    System.out.printf(
        "saturated: %,.0f events/s committed, %,.0f events/s commit→inbox commit (mean of %d"
            + " rounds)%n",
        committedTotal / rounds, consumed, rounds);
    System.out.printf(
        "paced at %,.0f/s: %,.0f events/s; latency p50 %.1f ms, p99 %.1f ms%n",
        half, paced.consumedPerS, paced.p50, paced.p99);
    System.out.printf(
        "%nRESULT events_per_s=%.0f p99_ms=%.1f vs_direct=%.2f%n",
        consumed, paced.p99, consumed / direct);
  }

  /** Writers flat out while relays send to the ledger consumer; drain included. */
  private Result saturated(Duration phase) throws Exception {
    return relayed(() -> appendAndConsume(phase, 0));
  }

  @FunctionalInterface
  private interface Phase {
    Result run() throws Exception;
  }

  /**
   * Runs {@code phase} with relays and the ledger consumer running, started for it alone (the
   * direct and append-only phases run with no relay polling beside them).
   */
  private Result relayed(Phase phase) throws Exception {
    InboxConsumer ledger =
        InboxConsumer.builder("ledger", ds, ledgerHandler())
            .redeliveryHorizon(Duration.ofDays(7))
            .retention(Duration.ofDays(14))
            .build();
    EmbeddedTransport transport = EmbeddedTransport.create().subscribe(timed(ledger));
    try (OutboxRelay relay =
        OutboxRelay.builder(ds, transport)
            .threads(relays)
            .batchSize(batch)
            .pollInterval(poll)
            .build()
            .start()) {
      return phase.run();
    }
  }

  /** The ledger consumer: two rows per payment, the whole batch's rows in one JDBC batch. */
  private MessageHandler ledgerHandler() {
    return new MessageHandler() {
      @Override
      public void apply(Connection tx, EventEnvelope m) throws Exception {
        applyAll(tx, List.of(m));
      }

      @Override
      public void applyAll(Connection tx, List<EventEnvelope> messages) throws Exception {
        try (PreparedStatement s =
            tx.prepareStatement(
                "insert into bench_ledger (entry_type, source_payment_id, account_id, amount)"
                    + " values (?, ?, ?, ?) on conflict do nothing")) {
          for (EventEnvelope m : messages) {
            addLedgerRows(s, UUID.fromString(m.aggregateId()));
          }
          s.executeBatch();
        }
      }
    };
  }

  private static void ledgerRows(PreparedStatement s, UUID payment) throws Exception {
    addLedgerRows(s, payment);
    s.executeBatch();
  }

  private static void addLedgerRows(PreparedStatement s, UUID payment) throws Exception {
    s.setString(1, "PAYMENT_DEBIT");
    s.setObject(2, payment);
    s.setString(3, "acc_1");
    s.setBigDecimal(4, BigDecimal.TEN);
    s.addBatch();
    s.setString(1, "PAYMENT_CREDIT");
    s.setObject(2, payment);
    s.setString(3, "merchant");
    s.setBigDecimal(4, BigDecimal.TEN);
    s.addBatch();
  }

  /** Records, after the inbox committed, each applied message's commit-to-consume latency. */
  private MessageReceiver timed(InboxConsumer inner) {
    return new MessageReceiver() {
      @Override
      public String consumerName() {
        return inner.consumerName();
      }

      @Override
      public List<Received> receive(List<EventEnvelope> messages) {
        List<Received> out = inner.receive(messages);
        long now = System.nanoTime();
        for (int i = 0; i < messages.size(); i++) {
          if (out.get(i) == Received.APPLIED) {
            Long at = committedAt.remove(messages.get(i).eventId());
            if (at != null) {
              latencyLog.add(now - at);
              consumed.increment();
            }
          }
        }
        lastConsumedAt.accumulateAndGet(now, Math::max);
        return out;
      }
    };
  }

  private record Result(double appendedPerS, double consumedPerS, double p50, double p99) {}

  /** Writers append for {@code phase} ({@code ratePerS} 0: flat out), then waits for the drain. */
  private Result appendAndConsume(Duration phase, double ratePerS) throws Exception {
    return append(phase, ratePerS, true);
  }

  /** Writers append for {@code phase}; then, if {@code drain}, waits until all were consumed. */
  private Result append(Duration phase, double ratePerS, boolean drain) throws Exception {
    LongAdder appended = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    long start = System.nanoTime();
    long intervalNanos = ratePerS > 0 ? (long) (1e9 * writers / ratePerS) : 0;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      done.add(
          pool.submit(
              () -> {
                long next = System.nanoTime();
                try (Connection c = ds.getConnection();
                    PreparedStatement pay =
                        c.prepareStatement(
                            "insert into bench_payment (id, amount) values (?, ?)")) {
                  c.setAutoCommit(false);
                  while (!stop.get()) {
                    if (intervalNanos > 0) {
                      next += intervalNanos;
                      long wait = next - System.nanoTime();
                      if (wait > 0) {
                        LockSupport.parkNanos(wait);
                      }
                    }
                    UUID id = UUID.randomUUID();
                    pay.setObject(1, id);
                    pay.setBigDecimal(2, BigDecimal.TEN);
                    pay.executeUpdate();
                    UUID eventId =
                        outbox
                            .append(
                                c,
                                new NewEvent(
                                    "PaymentCompleted",
                                    "bench",
                                    "payment",
                                    id.toString(),
                                    "payment:" + id,
                                    "{\"paymentId\":\"" + id + "\",\"amount\":\"10.00\"}"))
                            .event()
                            .eventId();
                    // Provisional (a relay may consume it before this thread runs again), then
                    // the commit's own time, unless the consumer has already taken the entry.
                    committedAt.put(eventId, System.nanoTime());
                    c.commit();
                    committedAt.computeIfPresent(eventId, (k, v) -> System.nanoTime());
                    appended.increment();
                  }
                }
                return null;
              }));
    }
    Thread.sleep(phase.toMillis());
    stop.set(true);
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    double appendSeconds = (System.nanoTime() - start) / 1e9;
    if (!drain) {
      return new Result(appended.sum() / appendSeconds, 0, Double.NaN, Double.NaN);
    }
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (consumed.sum() < appended.sum() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    double consumeSeconds = (lastConsumedAt.get() - start) / 1e9;
    long[] l = latencyLog.stream().mapToLong(Long::longValue).sorted().toArray();
    return new Result(
        appended.sum() / appendSeconds,
        consumed.sum() / consumeSeconds,
        percentile(l, 0.50),
        percentile(l, 0.99));
  }

  private static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
  }

  /** The baseline: payment and ledger rows in one transaction, flat out. */
  private double direct(Duration phase) throws Exception {
    LongAdder done = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<Future<?>> work = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      work.add(
          pool.submit(
              () -> {
                try (Connection c = ds.getConnection();
                    PreparedStatement pay =
                        c.prepareStatement("insert into bench_payment (id, amount) values (?, ?)");
                    PreparedStatement ledger =
                        c.prepareStatement(
                            "insert into bench_ledger (entry_type, source_payment_id, account_id,"
                                + " amount) values (?, ?, ?, ?) on conflict do nothing")) {
                  c.setAutoCommit(false);
                  while (!stop.get()) {
                    UUID id = UUID.randomUUID();
                    pay.setObject(1, id);
                    pay.setBigDecimal(2, BigDecimal.TEN);
                    pay.executeUpdate();
                    ledgerRows(ledger, id);
                    c.commit();
                    done.increment();
                  }
                }
                return null;
              }));
    }
    Thread.sleep(phase.toMillis());
    stop.set(true);
    for (Future<?> f : work) {
      f.get();
    }
    pool.shutdown();
    return done.sum() / ((System.nanoTime() - start) / 1e9);
  }

  private void reset() {
    execute(
        "truncate bench_payment, bench_ledger, idemkit_outbox, idemkit_outbox_aggregate,"
            + " idemkit_inbox");
    committedAt.clear();
    consumed.reset();
    latencyLog.clear();
    lastConsumedAt.set(0);
  }

  private void execute(String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  private static int intArg(String[] args, String name, int fallback) {
    int i = Arrays.asList(args).indexOf(name);
    return i >= 0 && i + 1 < args.length ? Integer.parseInt(args[i + 1]) : fallback;
  }
}
