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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * Claims and replays on a large record table against the same on an empty one: two schemas on one
 * server, each with the record table in {@code --layout} ({@code plain} or {@code
 * hash-partitioned}, {@code --partitions N}), one loaded with {@code --records} realistic rows
 * (default 1,000,000; by the database, {@link RecordLoad}), the other empty. Then {@code --rounds}
 * rounds (default 4) of {@code --seconds} each (default 5), {@code --workers} threads (default 8),
 * alternating the tables and which goes first: <b>claims</b> (a new key, its finished record
 * inserted with the commit: the request path's one write) and <b>replays</b> (a retry of a key
 * claimed earlier in the run, answered from its record).
 *
 * <p>Ends with {@code RESULT claims_vs_empty=<loaded/empty> replays_vs_empty=<loaded/empty> ...}
 * (target for both: at least 0.90). {@code IDEMKIT_JDBC_URL} picks a server; by default an embedded
 * PostgreSQL in a fresh temporary directory. The schemas are dropped at the end.
 */
public final class RecordsBenchmark {

  private static final byte[] BODY =
      "{\"paymentId\":\"p\",\"status\":\"COMPLETED\"}".getBytes(StandardCharsets.UTF_8);

  private static final LocalOperation OPERATION =
      ctx -> OperationResult.success(StoredResponse.of(201, Map.of(), BODY));

  /** One table's engine, its runs and the keys it claimed. */
  private static final class Table {
    final String name;
    final Idempotency idempotency;
    final StoreRuns runs;
    final StoreWorkload.Keys claimed = new StoreWorkload.Keys();
    final String tenant = "bench-" + UUID.randomUUID().toString().substring(0, 8);
    double claims;
    double replays;

    Table(String name, IdemkitDatabase db, int workers) {
      this.name = name;
      this.idempotency = Idempotency.create(PostgresIdempotencyStore.create(db.dataSource()));
      this.runs = new StoreRuns(db.dataSource(), workers);
    }

    void claim() {
      ScopedKey id = ScopedKey.of(tenant, "create_payment", UUID.randomUUID().toString());
      Outcome o = idempotency.execute(request(id), OPERATION);
      if (!(o instanceof Outcome.Executed)) {
        throw new IllegalStateException("expected an execution, got " + o);
      }
      claimed.add(id);
    }

    void replay() {
      Outcome o = idempotency.execute(request(claimed.any()), OPERATION);
      if (!(o instanceof Outcome.Replayed)) {
        throw new IllegalStateException("expected a replay, got " + o);
      }
    }

    private static IdempotentRequest request(ScopedKey id) {
      return new IdempotentRequest(
          id, Fingerprint.of(Map.of("k", id.key().value())), Duration.ofHours(24));
    }
  }

  public static void main(String[] args) throws Exception {
    int records = BenchArgs.intArg(args, "--records", 1_000_000);
    int seconds = BenchArgs.intArg(args, "--seconds", 5);
    int rounds = BenchArgs.intArg(args, "--rounds", 4);
    int workers = BenchArgs.intArg(args, "--workers", 8);
    RecordLayout layout = RecordLoad.layout(args);
    System.out.println("bench/records: starting PostgreSQL ...");
    try (IdemkitDatabase server = RecordLoad.server("idemkit-bench-records-pg");
        IdemkitDatabase emptyDb =
            RecordLoad.freshSchema(server, "idemkit_bench_empty", layout, workers);
        IdemkitDatabase loadedDb =
            RecordLoad.freshSchema(server, "idemkit_bench_loaded", layout, workers)) {
      System.out.printf(
          "Database: %s; record table %s; %,d records against none; %d workers, %d rounds of"
              + " %d s%n%n",
          server.description(), layout, records, workers, rounds, seconds);
      try {
        RecordLoad.load(loadedDb.dataSource(), records, false);
        System.out.println("loaded table: " + RecordLoad.sizes(loadedDb.dataSource()));
        System.out.println();
        run(
            new Table("empty", emptyDb, workers),
            new Table("loaded", loadedDb, workers),
            rounds,
            Duration.ofSeconds(seconds));
      } finally {
        RecordLoad.dropSchema(emptyDb.dataSource());
        RecordLoad.dropSchema(loadedDb.dataSource());
      }
    }
  }

  private static void run(Table empty, Table loaded, int rounds, Duration round) throws Exception {
    System.out.println("warm-up (not counted) ...");
    for (Table t : new Table[] {empty, loaded}) {
      t.runs.findPostmaster();
      t.runs.measure("claims " + t.name, Duration.ofSeconds(5), t::claim);
      t.runs.measure("replays " + t.name, Duration.ofSeconds(3), t::replay);
    }
    for (int r = 1; r <= rounds; r++) {
      Table[] order = r % 2 == 1 ? new Table[] {empty, loaded} : new Table[] {loaded, empty};
      for (Table t : order) {
        t.claims += t.runs.measure("claims " + t.name, round, t::claim);
      }
      for (Table t : order) {
        t.replays += t.runs.measure("replays " + t.name, round, t::replay);
      }
      System.out.printf(
          "round %d/%d (%s first): claims so far empty %8.0f/s loaded %8.0f/s   replays so far"
              + " empty %8.0f/s loaded %8.0f/s%n",
          r,
          rounds,
          order[0].name,
          empty.claims / r,
          loaded.claims / r,
          empty.replays / r,
          loaded.replays / r);
    }
    double claims = loaded.claims / empty.claims;
    double replays = loaded.replays / empty.replays;
    System.out.printf(
        "%nclaims  empty %8.0f/s   loaded %8.0f/s   loaded/empty %.2f (target >= 0.90)%n",
        empty.claims / rounds, loaded.claims / rounds, claims);
    System.out.printf(
        "replays empty %8.0f/s   loaded %8.0f/s   loaded/empty %.2f (target >= 0.90)%n",
        empty.replays / rounds, loaded.replays / rounds, replays);
    System.out.printf(
        "RESULT claims_vs_empty=%.2f replays_vs_empty=%.2f claims_empty_per_s=%.0f"
            + " claims_loaded_per_s=%.0f replays_empty_per_s=%.0f replays_loaded_per_s=%.0f%n",
        claims,
        replays,
        empty.claims / rounds,
        loaded.claims / rounds,
        empty.replays / rounds,
        loaded.replays / rounds);
  }
}
