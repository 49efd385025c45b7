package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.BusinessRejectionException;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
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
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The store on Spring's transactions, on PostgreSQL: the idempotency record and the business rows
 * an operation writes with {@code JdbcTemplate} commit, or roll back, together.
 */
class SpringJdbcTransactionsIT {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;
  private static DataSource dataSource;
  private static DataSourceTransactionManager transactionManager;
  private static JdbcTemplate jdbc;
  private static Idempotency idempotency;

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 10);
    dataSource = database.dataSource();
    transactionManager = new DataSourceTransactionManager(dataSource);
    jdbc = new JdbcTemplate(dataSource);
    jdbc.execute("create table payment (id text primary key, amount integer not null)");
    idempotency =
        Idempotency.create(
            PostgresIdempotencyStore.builder(
                    new SpringJdbcTransactions(dataSource, transactionManager))
                .build());
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  @Test
  void theRecordAndTheBusinessRowCommitTogether() {
    IdempotentRequest request = request();
    String paymentId = newId();

    Outcome outcome =
        idempotency.execute(
            request,
            (LocalOperation)
                ctx -> {
                  assertThat(TransactionSynchronizationManager.isActualTransactionActive())
                      .isTrue();
                  assertThat(ctx.unwrap(Connection.class))
                      .as("the store works on the connection bound to the Spring transaction")
                      .isSameAs(DataSourceUtils.getConnection(dataSource));
                  insertPayment(paymentId);
                  return OperationResult.success(created(paymentId));
                });

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(paymentRows(paymentId)).isEqualTo(1);
    assertThat(recordState(request.id())).isEqualTo(RecordState.COMPLETED.name());
    assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isFalse();
  }

  @Test
  void theLastStatementsTravelWithTheCommitOnlyWhenSpringCommitsNothingElse() throws Exception {
    SpringJdbcTransactions transactions =
        new SpringJdbcTransactions(dataSource, transactionManager);

    boolean own = transactions.inTransaction(transactions::commitsRightAfterWork);
    Boolean nested =
        new TransactionTemplate(transactionManager)
            .execute(
                status -> {
                  try {
                    return transactions.inTransaction(transactions::commitsRightAfterWork);
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
    boolean withSynchronization =
        transactions.inTransaction(
            c -> {
              TransactionSynchronizationManager.registerSynchronization(
                  new TransactionSynchronization() {});
              return transactions.commitsRightAfterWork(c);
            });

    assertThat(own).as("a transaction it began, nothing registered").isTrue();
    assertThat(nested).as("a savepoint of the caller's transaction").isFalse();
    assertThat(withSynchronization)
        .as("a synchronization could still write before the commit")
        .isFalse();
  }

  @Test
  void aWriteBeforeSpringsCommitStillCommitsWithTheRecord() {
    IdempotentRequest request = request();
    String paymentId = newId();
    String auditId = newId();

    Outcome outcome =
        idempotency.execute(
            request,
            (LocalOperation)
                ctx -> {
                  insertPayment(paymentId);
                  TransactionSynchronizationManager.registerSynchronization(
                      new TransactionSynchronization() {
                        @Override
                        public void beforeCommit(boolean readOnly) {
                          insertPayment(auditId);
                        }
                      });
                  return OperationResult.success(created(paymentId));
                });

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    // One transaction wrote the record, the operation's row and the row written before the commit.
    assertThat(paymentXmin(auditId))
        .isEqualTo(paymentXmin(paymentId))
        .isEqualTo(recordXmin(request.id()));
  }

  @Test
  void withNothingRegisteredTheCompletionCommitsWithTheRowInOneTransaction() {
    IdempotentRequest request = request();
    String paymentId = newId();

    idempotency.execute(
        request,
        (LocalOperation)
            ctx -> {
              insertPayment(paymentId);
              return OperationResult.success(created(paymentId));
            });

    assertThat(recordState(request.id())).isEqualTo(RecordState.COMPLETED.name());
    assertThat(recordXmin(request.id())).isEqualTo(paymentXmin(paymentId));
  }

  @Test
  void aRetryReplaysWithoutWritingAgain() {
    IdempotentRequest request = request();
    String paymentId = newId();
    LocalOperation createPayment =
        ctx -> {
          insertPayment(paymentId);
          return OperationResult.success(created(paymentId));
        };

    Outcome first = idempotency.execute(request, createPayment);
    Outcome retry = idempotency.execute(request, createPayment);

    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(retry.storedResponse()).isEqualTo(first.storedResponse());
    assertThat(paymentRows(paymentId)).isEqualTo(1);
  }

  @Test
  void anOperationThatThrowsRollsBackItsRowAndItsRecord() {
    IdempotentRequest request = request();
    String paymentId = newId();

    assertThatThrownBy(
            () ->
                idempotency.execute(
                    request,
                    (LocalOperation)
                        ctx -> {
                          insertPayment(paymentId);
                          throw new IllegalStateException("provider mapping failed");
                        }))
        .isInstanceOf(OperationFailedException.class)
        .hasRootCauseMessage("provider mapping failed");

    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordCount(request.id())).isZero();
  }

  @Test
  void aCheckedExceptionRollsBackAndReachesTheCallerUnwrapped() {
    IdempotentRequest request = request();
    String paymentId = newId();
    IOException failure = new IOException("disk full");

    assertThatThrownBy(
            () ->
                idempotency.execute(
                    request,
                    (LocalOperation)
                        ctx -> {
                          insertPayment(paymentId);
                          throw failure;
                        }))
        .isInstanceOf(OperationFailedException.class)
        .cause()
        .isSameAs(failure);

    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordCount(request.id())).isZero();
  }

  @Test
  void aFailedOperationCanBeRetriedAndThenCommits() {
    IdempotentRequest request = request();
    String paymentId = newId();
    assertThatThrownBy(
            () ->
                idempotency.execute(
                    request,
                    (LocalOperation)
                        ctx -> {
                          insertPayment(paymentId);
                          throw new IllegalStateException("transient");
                        }))
        .isInstanceOf(OperationFailedException.class);

    Outcome retry =
        idempotency.execute(
            request,
            (LocalOperation)
                ctx -> {
                  insertPayment(paymentId);
                  return OperationResult.success(created(paymentId));
                });

    assertThat(retry).isInstanceOf(Outcome.Executed.class);
    assertThat(paymentRows(paymentId)).isEqualTo(1);
  }

  @Test
  void aBusinessRejectionRollsBackTheRowAndStoresTheRejection() {
    IdempotentRequest request = request();
    String paymentId = newId();
    StoredResponse declined = StoredResponse.of(402, Map.of(), bytes("{\"declined\":true}"));

    Outcome outcome =
        idempotency.execute(
            request,
            (LocalOperation)
                ctx -> {
                  insertPayment(paymentId);
                  throw new BusinessRejectionException("card declined", declined);
                });

    assertThat(outcome).isEqualTo(new Outcome.Rejected(declined));
    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordState(request.id())).isEqualTo(RecordState.FAILED_REPLAYABLE.name());
  }

  @Test
  void insideAnOuterTransactionTheOperationJoinsItAndCommitsWithIt() {
    IdempotentRequest request = request();
    String paymentId = newId();
    TransactionTemplate outer = new TransactionTemplate(transactionManager);

    outer.executeWithoutResult(
        status -> {
          Connection outerConnection = DataSourceUtils.getConnection(dataSource);
          Outcome outcome =
              idempotency.execute(
                  request,
                  (LocalOperation)
                      ctx -> {
                        assertThat(ctx.unwrap(Connection.class)).isSameAs(outerConnection);
                        insertPayment(paymentId);
                        return OperationResult.success(created(paymentId));
                      });
          assertThat(outcome).isInstanceOf(Outcome.Executed.class);
          assertThat(status.isRollbackOnly()).isFalse();
          assertThat(committedRecordCount(request.id()))
              .as("not committed before the outer transaction is")
              .isZero();
        });

    assertThat(paymentRows(paymentId)).isEqualTo(1);
    assertThat(recordState(request.id())).isEqualTo(RecordState.COMPLETED.name());
  }

  @Test
  void anOuterTransactionRolledBackTakesTheRecordAndTheRowWithIt() {
    IdempotentRequest request = request();
    String paymentId = newId();
    TransactionTemplate outer = new TransactionTemplate(transactionManager);

    outer.executeWithoutResult(
        status -> {
          Outcome outcome =
              idempotency.execute(
                  request,
                  (LocalOperation)
                      ctx -> {
                        insertPayment(paymentId);
                        return OperationResult.success(created(paymentId));
                      });
          assertThat(outcome).isInstanceOf(Outcome.Executed.class);
          status.setRollbackOnly();
        });

    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordCount(request.id())).isZero();

    Outcome retry =
        idempotency.execute(
            request,
            (LocalOperation)
                ctx -> {
                  insertPayment(paymentId);
                  return OperationResult.success(created(paymentId));
                });
    assertThat(retry)
        .as("nothing was kept, so a retry runs the operation")
        .isInstanceOf(Outcome.Executed.class);
  }

  @Test
  void anOperationThatFailsInsideAnOuterTransactionLeavesNeitherItsRowNorItsRecord() {
    IdempotentRequest request = request();
    String paymentId = newId();
    TransactionTemplate outer = new TransactionTemplate(transactionManager);

    try {
      outer.executeWithoutResult(
          status ->
              assertThatThrownBy(
                      () ->
                          idempotency.execute(
                              request,
                              (LocalOperation)
                                  ctx -> {
                                    insertPayment(paymentId);
                                    throw new IllegalStateException("boom");
                                  }))
                  .isInstanceOf(OperationFailedException.class));
    } catch (UnexpectedRollbackException expected) {
      // Joined with PROPAGATION_REQUIRED, the failure marks the caller's transaction rollback-only.
    }

    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordCount(request.id())).isZero();
  }

  /**
   * A business rejection inside the caller's transaction must be stored and answered as a
   * rejection, as it is without one.
   */
  @Test
  void aBusinessRejectionInsideAnOuterTransactionIsStoredWithIt() {
    IdempotentRequest request = request();
    String paymentId = newId();
    StoredResponse declined = StoredResponse.of(402, Map.of(), bytes("{\"declined\":true}"));
    TransactionTemplate outer = new TransactionTemplate(transactionManager);

    Outcome outcome =
        outer.execute(
            status ->
                idempotency.execute(
                    request,
                    (LocalOperation)
                        ctx -> {
                          insertPayment(paymentId);
                          throw new BusinessRejectionException("card declined", declined);
                        }));

    assertThat(outcome).isEqualTo(new Outcome.Rejected(declined));
    assertThat(paymentRows(paymentId)).isZero();
    assertThat(recordState(request.id())).isEqualTo(RecordState.FAILED_REPLAYABLE.name());
  }

  @Test
  void withConnectionWorksOutsideTheCallersTransaction() throws Exception {
    SpringJdbcTransactions transactions =
        new SpringJdbcTransactions(dataSource, transactionManager);
    TransactionTemplate outer = new TransactionTemplate(transactionManager);

    outer.executeWithoutResult(
        status -> {
          Connection bound = DataSourceUtils.getConnection(dataSource);
          try {
            transactions.withConnection(
                c -> {
                  assertThat(c).isNotSameAs(bound);
                  assertThat(c.getAutoCommit()).isTrue();
                  return null;
                });
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
  }

  /**
   * Concurrent retries of one request on a pool whose connections default to REPEATABLE READ or
   * SERIALIZABLE: the Spring transactions the store begins run at READ COMMITTED, so every racer
   * gets the replay or "in progress", none a serialization failure, and one payment row exists.
   */
  @ParameterizedTest
  @ValueSource(strings = {"TRANSACTION_REPEATABLE_READ", "TRANSACTION_SERIALIZABLE"})
  void concurrentRetriesGetTheirAnswerWhateverThePoolsIsolation(String isolation) throws Exception {
    int racers = 24;
    HikariDataSource shared = (HikariDataSource) dataSource;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(shared.getJdbcUrl());
    config.setUsername(shared.getUsername());
    config.setPassword(shared.getPassword());
    config.setMaximumPoolSize(racers + 2);
    config.setTransactionIsolation(isolation);
    try (HikariDataSource pool = new HikariDataSource(config)) {
      JdbcTemplate poolJdbc = new JdbcTemplate(pool);
      Idempotency strict =
          Idempotency.create(
              PostgresIdempotencyStore.builder(
                      new SpringJdbcTransactions(pool, new DataSourceTransactionManager(pool)))
                  .build());
      IdempotentRequest request = request();
      String paymentId = newId();
      LocalOperation pay =
          ctx -> {
            poolJdbc.update("insert into payment (id, amount) values (?, ?)", paymentId, 100);
            poolJdbc.execute("select pg_sleep(0.2)"); // the business work: racers pile up
            return OperationResult.success(created(paymentId));
          };

      ExecutorService threads = Executors.newFixedThreadPool(racers);
      List<Outcome> outcomes = new ArrayList<>();
      try {
        CountDownLatch ready = new CountDownLatch(racers);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Outcome>> futures = new ArrayList<>();
        for (int i = 0; i < racers; i++) {
          futures.add(
              threads.submit(
                  () -> {
                    ready.countDown();
                    go.await();
                    return strict.execute(request, pay);
                  }));
        }
        assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
        go.countDown();
        for (Future<Outcome> f : futures) {
          outcomes.add(f.get(120, TimeUnit.SECONDS));
        }
      } finally {
        threads.shutdownNow();
      }

      assertThat(outcomes)
          .allSatisfy(
              o ->
                  assertThat(o)
                      .isInstanceOfAny(
                          Outcome.Executed.class,
                          Outcome.Replayed.class,
                          Outcome.InProgress.class));
      assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
      assertThat(paymentRows(paymentId)).isEqualTo(1);
    }
  }

  private static IdempotentRequest request() {
    return new IdempotentRequest(
        ScopedKey.of("tenant-a", "create_payment", UUID.randomUUID().toString()),
        Fingerprint.of(Map.of("amount", 100)),
        Duration.ofHours(1));
  }

  private static String newId() {
    return "pay_" + UUID.randomUUID();
  }

  /** Written with JdbcTemplate, as business code does: on the transaction's bound connection. */
  private static void insertPayment(String id) {
    jdbc.update("insert into payment (id, amount) values (?, ?)", id, 100);
  }

  private static StoredResponse created(String paymentId) {
    return StoredResponse.of(201, Map.of("Location", "/v1/payments/" + paymentId), bytes("{}"));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static int paymentRows(String id) {
    return jdbc.queryForObject("select count(*) from payment where id = ?", Integer.class, id);
  }

  private static int recordCount(ScopedKey id) {
    return jdbc.queryForObject(
        "select count(*) from idemkit_record where tenant = ? and operation = ? and idem_key = ?",
        Integer.class,
        id.tenant(),
        id.operation(),
        id.key().value());
  }

  /** Counted on a connection of its own, outside any transaction of the calling thread. */
  private static int committedRecordCount(ScopedKey id) {
    try (Connection c = dataSource.getConnection();
        var ps =
            c.prepareStatement(
                "select count(*) from idemkit_record"
                    + " where tenant = ? and operation = ? and idem_key = ?")) {
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String paymentXmin(String id) {
    return jdbc.queryForObject("select xmin::text from payment where id = ?", String.class, id);
  }

  private static String recordXmin(ScopedKey id) {
    return jdbc.queryForObject(
        "select xmin::text from idemkit_record where tenant = ? and operation = ? and idem_key = ?",
        String.class,
        id.tenant(),
        id.operation(),
        id.key().value());
  }

  private static String recordState(ScopedKey id) {
    return jdbc.queryForObject(
        "select state from idemkit_record where tenant = ? and operation = ? and idem_key = ?",
        String.class,
        id.tenant(),
        id.operation(),
        id.key().value());
  }
}
