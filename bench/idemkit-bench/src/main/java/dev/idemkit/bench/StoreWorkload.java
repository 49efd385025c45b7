package dev.idemkit.bench;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import javax.sql.DataSource;

/**
 * {@link StoreBenchmark}'s business write, a payment row and its outbox row: done bare, as the
 * engine's local operation, and as the statements the wrapped variant sends without the engine
 * ({@code sql}); the keys the wrapped runs completed, for the replays.
 */
final class StoreWorkload {

  private final DataSource dataSource;
  private final String tenant;

  StoreWorkload(DataSource dataSource, String tenant) {
    this.dataSource = dataSource;
    this.tenant = tenant;
  }

  /**
   * Up to {@value #KEPT} keys the wrapped runs completed, for the replays. Kept without copying: a
   * {@code CopyOnWriteArrayList} copied its whole array on every add, up to 160 kB a request, which
   * the wrapped rounds paid and the bare and sql rounds did not.
   */
  static final class Keys {
    private final AtomicReferenceArray<ScopedKey> keys = new AtomicReferenceArray<>(KEPT);
    private final AtomicInteger added = new AtomicInteger();

    void add(ScopedKey key) {
      if (added.get() < KEPT) {
        int i = added.getAndIncrement();
        if (i < KEPT) {
          keys.set(i, key);
        }
      }
    }

    /** One of the keys added so far, at random (waiting for a slot whose key is being set). */
    ScopedKey any() {
      int n = Math.min(added.get(), KEPT);
      while (true) {
        ScopedKey key = keys.get(ThreadLocalRandom.current().nextInt(n));
        if (key != null) {
          return key;
        }
      }
    }
  }

  private static final int KEPT = 20_000;

  void bare() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        insertPaymentAndEvent(c, UUID.randomUUID());
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /*
   * The "sql" variant. What the wrapped variant sends for its LocalOperation, statement for
   * statement: the store's transaction (DataSourceTransactions: autocommit off; nothing for
   * ReadCommitted to send, the pool's connections being READ COMMITTED), the two business inserts,
   * then the insert of the finished record with the commit in one round trip. RECORD is
   * PostgresIdempotencyStore's text (read from the store), bound with the same values.
   */

  /**
   * The store's own insert of a local operation's finished record with the commit, read from it so
   * that the two cannot drift apart.
   */
  static final String RECORD = storeStatement("INSERT_FINISHED_AND_COMMIT");

  /** The window the wrapped variant asks for. */
  private static final Duration TTL = Duration.ofHours(24);

  /** The stored headers as the store writes them ({@code Json.write} of the answer's headers). */
  static final String HEADERS = "{\"Content-Type\":\"application/json\"}";

  void sql() throws SQLException {
    String key = UUID.randomUUID().toString();
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        UUID paymentId = UUID.randomUUID();
        insertPaymentAndEvent(c, paymentId);
        record(c, key, paymentId);
        c.commit(); // sends nothing: the record's round trip committed
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    }
  }

  void record(Connection c, String key, UUID paymentId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RECORD)) {
      ps.setNull(1, Types.VARCHAR);
      ps.setString(2, tenant);
      ps.setString(3, "create_payment");
      ps.setString(4, key);
      ps.setString(5, COMMAND.toString());
      ps.setString(6, "COMPLETED");
      ps.setInt(7, 201);
      ps.setString(8, HEADERS);
      ps.setBytes(9, answer(paymentId));
      ps.setInt(10, 1);
      ps.setString(11, paymentId.toString());
      ps.setLong(12, TTL.toMillis());
      ps.execute();
      int rows = ps.getUpdateCount();
      if (rows != 1) {
        throw new IllegalStateException("the record of " + key + " inserted " + rows + " rows");
      }
    }
  }

  static String storeStatement(String name) {
    try {
      Field field = PostgresIdempotencyStore.class.getDeclaredField(name);
      field.setAccessible(true);
      // A NamedSql: its JDBC text, each :name a "?" in the order the names stand
      Object statement = field.get(null);
      Method sql = statement.getClass().getDeclaredMethod("sql");
      sql.setAccessible(true);
      return (String) sql.invoke(statement);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("PostgresIdempotencyStore has no statement " + name, e);
    }
  }

  static byte[] answer(UUID paymentId) {
    return ("{\"paymentId\":\"" + paymentId + "\",\"status\":\"CREATED\",\"amount\":\"10.00\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static final Fingerprint COMMAND =
      Fingerprint.of(Map.of("accountId", "acc_1", "amount", "10.00", "currency", "EUR"));

  static IdempotentRequest request(ScopedKey id) {
    return new IdempotentRequest(id, COMMAND, TTL);
  }

  static LocalOperation payment() {
    return ctx -> {
      UUID paymentId = UUID.randomUUID();
      insertPaymentAndEvent(ctx.unwrap(Connection.class), paymentId);
      return OperationResult.success(
          StoredResponse.of(201, Map.of("Content-Type", "application/json"), answer(paymentId))
              .withResourceId(paymentId.toString()));
    };
  }

  static void insertPaymentAndEvent(Connection c, UUID paymentId) throws SQLException {
    try (PreparedStatement payment =
        c.prepareStatement(
            "insert into bench_payment (id, account_id, amount, currency, merchant_reference)"
                + " values (?, 'acc_1', ?, 'EUR', ?)")) {
      payment.setObject(1, paymentId);
      payment.setBigDecimal(2, new BigDecimal("10.00"));
      payment.setString(3, "order-" + paymentId);
      payment.executeUpdate();
    }
    try (PreparedStatement event =
        c.prepareStatement(
            "insert into bench_outbox (event_id, aggregate_id, event_type, payload)"
                + " values (?, ?, 'PaymentCreated', ?)")) {
      event.setObject(1, UUID.randomUUID());
      event.setObject(2, paymentId);
      event.setString(3, "{\"paymentId\":\"" + paymentId + "\",\"amount\":\"10.00\"}");
      event.executeUpdate();
    }
  }

  void createTables() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "create table if not exists bench_payment (id uuid primary key, account_id text not null,"
              + " amount numeric(19,2) not null, currency text not null,"
              + " merchant_reference text not null, created_at timestamptz not null default now(),"
              + " unique (account_id, merchant_reference))");
      s.execute(
          "create table if not exists bench_outbox (event_id uuid primary key,"
              + " aggregate_id uuid not null, event_type text not null, payload text not null,"
              + " created_at timestamptz not null default now())");
    }
  }

  /** The wrapped runs must have written exactly one payment per completed key. */
  void checkOnePaymentPerKey() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select count(*), count(distinct resource_id) from idemkit_record"
                    + " where tenant = ? and state = 'COMPLETED'")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        System.out.printf(
            "Check: %d completed records, %d distinct payments%n", rs.getLong(1), rs.getLong(2));
      }
    }
  }
}
