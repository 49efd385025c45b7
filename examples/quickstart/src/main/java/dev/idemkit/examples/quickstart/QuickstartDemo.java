package dev.idemkit.examples.quickstart;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.EmbeddedDataDirInUseException;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.NoEmbeddedPostgresException;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;

/**
 * Shows what Idemkit does, against a real PostgreSQL: a first request runs, its retry replays, the
 * same key with another amount is refused, and many identical requests released together pay once.
 */
public final class QuickstartDemo {

  /** What the demo saw, for its test. */
  public record Summary(
      Outcome first,
      Outcome retry,
      Outcome changedAmount,
      Map<String, Integer> raceOutcomes,
      long paymentsForRaceKey,
      long paymentsForFirstKey) {}

  private static final int RACERS = 32;

  private final Idempotency idempotency;
  private final DataSource dataSource;
  private final PrintStream out;
  private final String tenant = "demo-tenant";

  QuickstartDemo(DataSource dataSource, PrintStream out) {
    this.dataSource = dataSource;
    this.out = out;
    this.idempotency = Idempotency.create(PostgresIdempotencyStore.create(dataSource));
  }

  public static void main(String[] args) throws Exception {
    System.out.println("Idemkit quickstart: starting PostgreSQL ...");
    IdemkitDatabase started;
    try {
      started = IdemkitDatabase.fromEnvironment(RACERS + 4);
    } catch (EmbeddedDataDirInUseException e) {
      // The payments service (or another quickstart) runs on the same folder: one line, no trace.
      System.err.println(
          e.getMessage()
              + " Run the quickstart on a folder of its own: IDEMKIT_DATA_DIR=<another folder>.");
      System.exit(1);
      return;
    } catch (NoEmbeddedPostgresException e) {
      System.err.println(
          e.getMessage()
              + " Run the quickstart on a PostgreSQL of your own: IDEMKIT_JDBC_URL="
              + "jdbc:postgresql://<host>:5432/<database> with IDEMKIT_JDBC_USER and"
              + " IDEMKIT_JDBC_PASSWORD (docs/platforms.md).");
      System.exit(1);
      return;
    }
    try (IdemkitDatabase db = started) {
      System.out.println("Using " + db.description());
      new QuickstartDemo(db.dataSource(), System.out).run();
    }
  }

  Summary run() throws Exception {
    createPaymentTable();
    long kept = count("select count(*) from idemkit_record where tenant = '" + tenant + "'");
    out.printf("Records kept from earlier runs: %d (they survive restarts)%n%n", kept);

    String key = "demo-" + UUID.randomUUID();
    ScopedKey id = ScopedKey.of(tenant, "create_payment", key);

    out.println("1. POST a payment of 10.00 EUR with Idempotency-Key " + key);
    Outcome first = pay(id, "10.00");
    show(first);

    out.println("2. The client retries (its answer was lost) with the same key and body");
    Outcome retry = pay(id, "10.00");
    show(retry);

    out.println("3. A buggy client reuses the key for 99.00 EUR");
    Outcome changed = pay(id, "99.00");
    show(changed);

    String raceKey = "demo-race-" + UUID.randomUUID();
    ScopedKey raceId = ScopedKey.of(tenant, "create_payment", raceKey);
    out.printf("4. %d identical requests with key %s, released together%n", RACERS, raceKey);
    Map<String, Integer> race = race(raceId);
    race.forEach((outcome, n) -> out.printf("   %-10s x %d%n", outcome, n));

    long raceRows = payments(raceKey);
    long firstRows = payments(key);
    out.println();
    out.printf(
        "Payment rows: key 1 -> %d, race key -> %d (one payment each, however often retried)%n",
        firstRows, raceRows);
    return new Summary(first, retry, changed, race, raceRows, firstRows);
  }

  private Outcome pay(ScopedKey id, String amount) {
    BigDecimal normalized = new BigDecimal(amount).setScale(2);
    Fingerprint fp =
        Fingerprint.of(Map.of("amount", normalized.toPlainString(), "currency", "EUR"));
    LocalOperation insertPayment =
        ctx -> {
          String paymentId = "pay_" + UUID.randomUUID().toString().substring(0, 8);
          try (PreparedStatement ps =
              ctx.unwrap(Connection.class)
                  .prepareStatement(
                      "insert into quickstart_payment (id, idempotency_key, amount, currency)"
                          + " values (?, ?, ?, 'EUR')")) {
            ps.setString(1, paymentId);
            ps.setString(2, id.key().value());
            ps.setBigDecimal(3, normalized);
            ps.executeUpdate();
          }
          String body = "{\"paymentId\":\"" + paymentId + "\",\"amount\":\"" + normalized + "\"}";
          return OperationResult.success(
              StoredResponse.of(
                      201,
                      Map.of("Content-Type", "application/json"),
                      body.getBytes(StandardCharsets.UTF_8))
                  .withResourceId(paymentId));
        };
    return idempotency.execute(new IdempotentRequest(id, fp, Duration.ofHours(24)), insertPayment);
  }

  private Map<String, Integer> race(ScopedKey id) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(RACERS);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Outcome>> futures = new ArrayList<>();
      for (int i = 0; i < RACERS; i++) {
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  return pay(id, "10.00");
                }));
      }
      go.countDown();
      Map<String, Integer> counts = new TreeMap<>();
      for (Future<Outcome> f : futures) {
        counts.merge(f.get().getClass().getSimpleName(), 1, Integer::sum);
      }
      return counts;
    } finally {
      pool.shutdownNow();
    }
  }

  private void show(Outcome outcome) {
    String answer;
    if (outcome instanceof Outcome.Executed e) {
      answer = "Executed  -> " + e.response().status() + " " + body(e.response());
    } else if (outcome instanceof Outcome.Replayed r) {
      answer =
          "Replayed  -> "
              + r.response().status()
              + " "
              + body(r.response())
              + "  (Idempotent-Replayed: true; nothing ran)";
    } else if (outcome instanceof Outcome.Mismatch) {
      answer = "Mismatch  -> 422 IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST (nothing ran)";
    } else {
      answer = outcome.toString();
    }
    out.println("   " + answer);
    out.println();
  }

  private static String body(StoredResponse response) {
    return new String(response.body(), StandardCharsets.UTF_8);
  }

  private void createPaymentTable() throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "create table if not exists quickstart_payment (id text primary key,"
              + " idempotency_key text not null, amount numeric(19,2) not null,"
              + " currency text not null, created_at timestamptz not null default now())");
    }
  }

  private long payments(String key) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select count(*) from quickstart_payment where idempotency_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private long count(String sql) throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
