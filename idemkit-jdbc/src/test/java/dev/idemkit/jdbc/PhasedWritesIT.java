package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.StoreTransaction;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * What an uninterrupted phased operation writes to the record tables, shaped like the example's
 * payment (a local phase with a business row, one provider call, a completion): counted by row
 * triggers on a schema of the test's own, with the transaction each write ran in. The run prints a
 * {@code PHASED} line with the counts (issue 33's target: two record writes, in two commits, no
 * history).
 */
class PhasedWritesIT {

  private static final int PAYMENTS = 20;

  /**
   * The payment without Idemkit: the local phase's insert and its commit, then the completion's
   * update and its commit.
   */
  private static final int RAW_ROUND_TRIPS = 4;

  private IdemkitDatabase db;
  private DataSource dataSource;
  private Idempotency idempotency;

  @BeforeEach
  void setUp() {
    db = TestDatabase.freshSchema(4);
    dataSource = db.dataSource();
    TestDatabase.execute(
        dataSource,
        """
        create table phased_payment (id text primary key, confirmed boolean not null default false);
        create table record_write (tbl text, op text, xid bigint);
        create function count_record_write() returns trigger language plpgsql as $$
        begin
          insert into record_write values (tg_table_name, tg_op, txid_current());
          return null;
        end $$;
        create trigger count_record after insert or update on idemkit_record
          for each row execute function count_record_write();
        create trigger count_history after insert or update on idemkit_record_history
          for each row execute function count_record_write();
        create trigger count_payment after insert on phased_payment
          for each row execute function count_record_write();
        """);
    idempotency =
        Idempotency.create(
            PostgresIdempotencyStore.create(counting(dataSource)),
            IdempotencyConfig.builder()
                .lease(Duration.ofSeconds(30))
                .defaultTtl(Duration.ofHours(1))
                .build());
  }

  @AfterEach
  void tearDown() {
    db.close();
  }

  /**
   * Round trips, approximately as the driver makes them: one per statement executed, commit,
   * rollback and isolation-level query (the driver sends {@code BEGIN} with the first statement and
   * nothing for {@code setAutoCommit}). Statements sent together in one execute count once.
   */
  private final AtomicLong roundTrips = new AtomicLong();

  private DataSource counting(DataSource target) {
    return (DataSource)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(target, method, args);
              return result instanceof Connection c ? countingConnection(c) : result;
            });
  }

  private Connection countingConnection(Connection target) {
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              String name = method.getName();
              if (name.equals("getTransactionIsolation")
                  || ((name.equals("commit") || name.equals("rollback"))
                      && target.unwrap(BaseConnection.class).getTransactionState()
                          != TransactionState.IDLE)) {
                // A commit with no transaction open (its COMMIT went with the last write) sends
                // nothing.
                roundTrips.incrementAndGet();
              }
              Object result = invoke(target, method, args);
              if (result instanceof PreparedStatement ps) {
                return countingStatement(ps, PreparedStatement.class);
              }
              if (result instanceof Statement st) {
                return countingStatement(st, Statement.class);
              }
              return result;
            });
  }

  private <T> T countingStatement(T target, Class<T> type) {
    return type.cast(
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {type},
            (proxy, method, args) -> {
              if (method.getName().startsWith("execute")) {
                roundTrips.incrementAndGet();
              }
              return invoke(target, method, args);
            }));
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void anUninterruptedPaymentWritesItsRecordInTwoCommitsAndNoHistory() throws Exception {
    roundTrips.set(0);
    for (int i = 0; i < PAYMENTS; i++) {
      ScopedKey id = ScopedKey.of("phased", "create_payment", "k-" + i);
      Outcome outcome =
          idempotency.execute(
              new IdempotentRequest(id, Fingerprint.of(Map.of("n", "" + i)), Duration.ofHours(1)),
              payment());
      assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    }

    long trips = roundTrips.get();
    long recordWrites = scalar("select count(*) from record_write where tbl = 'idemkit_record'");
    long historyWrites =
        scalar("select count(*) from record_write where tbl = 'idemkit_record_history'");
    long recordTransactions =
        scalar("select count(distinct xid) from record_write where tbl = 'idemkit_record'");
    long paymentsWithTheirClaim =
        scalar(
            "select count(*) from record_write p where p.tbl = 'phased_payment' and exists"
                + " (select 1 from record_write r where r.tbl = 'idemkit_record'"
                + " and r.xid = p.xid)");
    System.out.printf(
        "PHASED record_writes_per_op=%.2f history_writes_per_op=%.2f"
            + " record_transactions_per_op=%.2f round_trips_per_op=%.2f"
            + " extra_round_trips=%.2f (%s)%n",
        (double) recordWrites / PAYMENTS,
        (double) historyWrites / PAYMENTS,
        (double) recordTransactions / PAYMENTS,
        (double) trips / PAYMENTS,
        (double) trips / PAYMENTS - RAW_ROUND_TRIPS,
        scalar("select count(*) from record_write where tbl = 'idemkit_record' and op = 'INSERT'")
            + " inserts");

    assertThat(historyWrites).as("no history on the happy path").isZero();
    assertThat(recordWrites)
        .as("the insert at the call's marker, the completion")
        .isEqualTo(2L * PAYMENTS);
    assertThat(recordTransactions).as("two commits write the record").isEqualTo(2L * PAYMENTS);
    assertThat(trips)
        .as(
            "each record write travels with its commit: local phase, record's insert with"
                + " commit; update, completion with commit (raw's four); the pool's isolation"
                + " level read once")
        .isLessThanOrEqualTo((long) RAW_ROUND_TRIPS * PAYMENTS + 1);
    assertThat(paymentsWithTheirClaim)
        .as("the local phase's rows commit with the record's first write")
        .isEqualTo(PAYMENTS);
  }

  /**
   * The same payment claiming first ({@code PhasedOperation.Builder.claimingFirst()}): the claim is
   * a write and a round trip of its own, before the local phase, and the call's marker an update.
   * The run prints a {@code PHASED_CLAIM_FIRST} line, the figures docs/contract.md §5 quotes for
   * the per-operation choice.
   */
  @Test
  void claimingFirstCostsAWriteAndARoundTripMore() throws Exception {
    roundTrips.set(0);
    for (int i = 0; i < PAYMENTS; i++) {
      ScopedKey id = ScopedKey.of("phased", "create_payment", "claim-first-" + i);
      Outcome outcome =
          idempotency.execute(
              new IdempotentRequest(id, Fingerprint.of(Map.of("n", "" + i)), Duration.ofHours(1)),
              payment(PhasedOperation.builder().claimingFirst()));
      assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    }

    long trips = roundTrips.get();
    long recordWrites = scalar("select count(*) from record_write where tbl = 'idemkit_record'");
    System.out.printf(
        "PHASED_CLAIM_FIRST record_writes_per_op=%.2f round_trips_per_op=%.2f"
            + " extra_round_trips=%.2f%n",
        (double) recordWrites / PAYMENTS,
        (double) trips / PAYMENTS,
        (double) trips / PAYMENTS - RAW_ROUND_TRIPS);

    assertThat(recordWrites).as("claim, the call's marker, completion").isEqualTo(3L * PAYMENTS);
    assertThat(trips)
        .as("the claim's round trip on top of raw's four; the isolation level read once")
        .isLessThanOrEqualTo((RAW_ROUND_TRIPS + 1L) * PAYMENTS + 1);
    assertThat(scalar("select count(*) from phased_payment where confirmed")).isEqualTo(PAYMENTS);
  }

  /**
   * A paused owner ("zombie") completes after another owner took its record over: its completion,
   * sent with the commit in one round trip, matches no row and fails its statement, so the commit
   * never runs and the business row written in the same transaction is not kept.
   */
  @Test
  void aZombiesCompletionSentWithTheCommitKeepsNoneOfItsWrites() throws Exception {
    assertZombieKeepsNothing(
        (store, tx, zombie) ->
            store.finish(
                tx, zombie, FinalAnswer.completed(StoredResponse.of(201, Map.of(), new byte[0]))));
  }

  private void assertZombieKeepsNothing(OwnerWrite write) throws Exception {
    PostgresIdempotencyStore store = PostgresIdempotencyStore.create(dataSource);
    ScopedKey id = ScopedKey.of("phased", "create_payment", "k-zombie");
    Ownership zombie =
        store.inTransaction(
            tx ->
                Ownership.of(
                    ((ClaimAttempt.Inserted)
                            store.claim(
                                tx,
                                new NewRecord(
                                    id, Fingerprint.of(Map.of("n", "z")), Duration.ofHours(1)),
                                Duration.ofSeconds(30)))
                        .record()));
    TestDatabase.execute(
        dataSource,
        "update idemkit_record set fencing_token = 2 where idem_key = 'k-zombie'"); // taken over

    assertThatThrownBy(
            () ->
                store.inTransaction(
                    tx -> {
                      try (PreparedStatement ps =
                          tx.unwrap(Connection.class)
                              .prepareStatement("insert into phased_payment values ('zombie')")) {
                        ps.executeUpdate();
                      }
                      write.write(store, tx, zombie);
                      return null;
                    }))
        .isInstanceOf(LostOwnershipException.class);
    assertThat(scalar("select count(*) from phased_payment where id = 'zombie'")).isZero();
    assertThat(store.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
  }

  /** The same for a zombie's call marker: the first commit's last write. */
  @Test
  void aZombiesMarkerSentWithTheCommitKeepsNoneOfItsWrites() throws Exception {
    assertZombieKeepsNothing(
        (store, tx, zombie) ->
            store.advance(tx, zombie, new Checkpoint("LOCAL", "PROVIDER", Map.of())));
  }

  @FunctionalInterface
  private interface OwnerWrite {
    void write(PostgresIdempotencyStore store, StoreTransaction tx, Ownership zombie);
  }

  private static PhasedOperation<Map<String, String>> payment() {
    return payment(PhasedOperation.builder());
  }

  private static PhasedOperation<Map<String, String>> payment(
      PhasedOperation.Builder<Map<String, String>> builder) {
    return builder
        .local(
            "LOCAL_PAYMENT_CREATED",
            (ctx, d) -> {
              try (PreparedStatement ps =
                  ctx.unwrap(Connection.class)
                      .prepareStatement("insert into phased_payment values (?)")) {
                ps.setString(1, ctx.id().key().value());
                ps.executeUpdate();
              }
              return Step.next(d);
            })
        .external(
            "PROVIDER_CONFIRMED",
            call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
        .complete(
            (ctx, d) -> {
              try (PreparedStatement ps =
                  ctx.unwrap(Connection.class)
                      .prepareStatement(
                          "update phased_payment set confirmed = true where id = ?")) {
                ps.setString(1, ctx.id().key().value());
                ps.executeUpdate();
              }
              return OperationResult.success(
                  StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)));
            });
  }

  private long scalar(String sql) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
