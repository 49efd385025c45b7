package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Concurrent retries of one request on a pool whose connections default to a stricter isolation
 * than READ COMMITTED: the store's transactions still run at READ COMMITTED, so the racers get the
 * replay or "in progress", never a serialization failure, and the operation runs once.
 */
class IsolationIT {

  private static final int RACERS = 24;

  @ParameterizedTest
  @ValueSource(strings = {"TRANSACTION_REPEATABLE_READ", "TRANSACTION_SERIALIZABLE"})
  void concurrentRetriesGetTheirAnswerWhateverThePoolsIsolation(String isolation) throws Exception {
    HikariDataSource shared = (HikariDataSource) TestDatabase.embedded().dataSource();
    TestDatabase.execute(
        shared, "create table if not exists isolation_ledger (idem_key text not null)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(shared.getJdbcUrl());
    config.setUsername(shared.getUsername());
    config.setPassword(shared.getPassword());
    config.setMaximumPoolSize(RACERS + 2);
    config.setTransactionIsolation(isolation);
    try (HikariDataSource pool = new HikariDataSource(config)) {
      try (Connection c = pool.getConnection()) {
        assertThat(c.getTransactionIsolation())
            .isEqualTo(
                isolation.equals("TRANSACTION_SERIALIZABLE")
                    ? Connection.TRANSACTION_SERIALIZABLE
                    : Connection.TRANSACTION_REPEATABLE_READ);
      }
      Idempotency idempotency = Idempotency.create(PostgresIdempotencyStore.create(pool));
      String key = UUID.randomUUID().toString();
      IdempotentRequest request =
          new IdempotentRequest(
              ScopedKey.of("tenant-iso", "create_payment", key),
              Fingerprint.of(Map.of("amount", "10.00")),
              Duration.ofHours(24));
      LocalOperation pay =
          ctx -> {
            Connection c = ctx.unwrap(Connection.class);
            try (PreparedStatement ps =
                c.prepareStatement("insert into isolation_ledger (idem_key) values (?)")) {
              ps.setString(1, key);
              ps.executeUpdate();
            }
            try (Statement s = c.createStatement()) {
              s.execute("select pg_sleep(0.2)"); // the business work: racers pile up on the claim
            }
            return OperationResult.success(StoredResponse.of(201, Map.of(), new byte[] {'{', '}'}));
          };

      List<Outcome> outcomes = race(() -> idempotency.execute(request, pay));

      assertThat(outcomes)
          .allSatisfy(
              o ->
                  assertThat(o)
                      .isInstanceOfAny(
                          Outcome.Executed.class,
                          Outcome.Replayed.class,
                          Outcome.InProgress.class));
      assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
      assertThat(ledgerRows(pool, key)).isEqualTo(1);
    }
  }

  private static long ledgerRows(HikariDataSource pool, String key) throws Exception {
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement("select count(*) from isolation_ledger where idem_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Runs {@code task} on {@link #RACERS} threads released together; any exception fails. */
  static <T> List<T> race(java.util.concurrent.Callable<T> task) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(RACERS);
    try {
      CountDownLatch ready = new CountDownLatch(RACERS);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < RACERS; i++) {
        futures.add(
            threads.submit(
                () -> {
                  ready.countDown();
                  go.await();
                  return task.call();
                }));
      }
      assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
      go.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get(120, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      threads.shutdownNow();
    }
  }
}
