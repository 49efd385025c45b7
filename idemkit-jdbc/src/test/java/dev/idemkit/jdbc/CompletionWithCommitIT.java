package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.Quotas;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A local operation's completion travels with its transaction's commit in one round trip when the
 * store commits its own transactions. What that must not change: a commit that fails keeps nothing,
 * claim included, so a retry runs afresh; a write after the completion (the quota admission) still
 * sees the completion sent first.
 */
class CompletionWithCommitIT {

  private static DataSource dataSource;

  @BeforeAll
  static void tables() {
    dataSource = TestDatabase.embedded().dataSource();
    TestDatabase.execute(
        dataSource,
        "create table if not exists commit_probe (ref text not null,"
            + " constraint commit_probe_ref_uq unique (ref) deferrable initially deferred)");
  }

  @Test
  void aCommitThatFailsKeepsNothingAndTheRetryRunsAfresh() throws Exception {
    String taken = "taken-" + UUID.randomUUID();
    TestDatabase.execute(dataSource, "insert into commit_probe (ref) values ('" + taken + "')");
    PostgresIdempotencyStore store = PostgresIdempotencyStore.create(dataSource);
    Idempotency idempotency = Idempotency.create(store);
    IdempotentRequest request = request("tenant-commit");

    // The deferred unique constraint is checked by the commit itself, after the completion.
    assertThatThrownBy(() -> idempotency.execute(request, insert(taken)))
        .isInstanceOf(OperationFailedException.class)
        .hasStackTraceContaining("commit_probe_ref_uq");
    assertThat(store.find(request.id())).isEmpty();
    assertThat(count(taken)).isEqualTo(1);

    String fresh = "fresh-" + UUID.randomUUID();
    Outcome outcome = idempotency.execute(request, insert(fresh));
    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(count(fresh)).isEqualTo(1);
    assertThat(store.find(request.id()))
        .hasValueSatisfying(
            r -> {
              assertThat(r.state()).isEqualTo(RecordState.COMPLETED);
              assertThat(new String(r.response().body(), StandardCharsets.UTF_8))
                  .isEqualTo("{\"ref\":\"" + fresh + "\"}");
            });
  }

  @Test
  void withQuotasTheAdmissionFollowsTheCompletion() throws Exception {
    PostgresIdempotencyStore store = PostgresIdempotencyStore.create(dataSource);
    Idempotency idempotency =
        Idempotency.create(store, IdempotencyConfig.builder().quotas(new Quotas(100, 10)).build());
    IdempotentRequest request = request("tenant-commit-quota");
    String ref = "quota-" + UUID.randomUUID();

    Outcome first = idempotency.execute(request, insert(ref));
    Outcome again = idempotency.execute(request, insert("never-" + UUID.randomUUID()));

    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(again).isInstanceOf(Outcome.Replayed.class);
    assertThat(new String(((Outcome.Replayed) again).response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"ref\":\"" + ref + "\"}");
    assertThat(count(ref)).isEqualTo(1);
    assertThat(store.find(request.id()).map(r -> r.state())).contains(RecordState.COMPLETED);
  }

  @Test
  void aQuotaRefusalAtTheEndOfTheTransactionKeepsNothing() throws Exception {
    // One clock for both requests, so that they count in the same minute.
    PostgresIdempotencyStore store =
        PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource))
            .clock(Clock.fixed(Instant.now(), ZoneOffset.UTC))
            .build();
    Idempotency idempotency =
        Idempotency.create(store, IdempotencyConfig.builder().quotas(new Quotas(1, 0)).build());
    String tenant = "tenant-commit-refused-" + UUID.randomUUID();
    IdempotentRequest admitted = request(tenant);
    IdempotentRequest refused = request(tenant);
    String keptRef = "kept-" + UUID.randomUUID();
    String refusedRef = "refused-" + UUID.randomUUID();

    Outcome first = idempotency.execute(admitted, insert(keptRef));
    Outcome second = idempotency.execute(refused, insert(refusedRef));

    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(second)
        .isInstanceOfSatisfying(
            Outcome.QuotaExceeded.class,
            q -> {
              assertThat(q.quota()).isEqualTo("new_keys");
              assertThat(q.limit()).isEqualTo(1);
              assertThat(q.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(60));
            });
    assertThat(count(keptRef)).isEqualTo(1);
    assertThat(count(refusedRef)).as("the refused key's business row rolled back").isZero();
    assertThat(store.find(refused.id())).as("no record for the refused key").isEmpty();
    // The refused key is not counted: a retry of the admitted one still replays.
    assertThat(idempotency.execute(admitted, insert("never-" + UUID.randomUUID())))
        .isInstanceOf(Outcome.Replayed.class);
  }

  /**
   * Claiming first, the record is inserted and then completed by a HOT update; written last (the
   * default), it is inserted once, finished, and never updated.
   */
  @ParameterizedTest(name = "claiming first: {0}")
  @ValueSource(booleans = {true, false})
  void aLocalOperationInsertsItsRecordOnceAndAnyCompletionIsAHotUpdate(boolean claimingFirst)
      throws Exception {
    // The store's own transactions, except that the completion is sent alone (not with the
    // commit), so the transaction's own table counters can be read after it, before the commit.
    JdbcTransactions own = JdbcTransactions.of(dataSource);
    List<long[]> updates = new CopyOnWriteArrayList<>();
    JdbcTransactions probing =
        new JdbcTransactions() {
          @Override
          public <T> T inTransaction(ConnectionWork<T> work) throws Exception {
            return own.inTransaction(
                c -> {
                  long[] before = recordUpdates(c);
                  T result = work.run(c);
                  long[] after = recordUpdates(c);
                  updates.add(
                      new long[] {
                        after[0] - before[0], after[1] - before[1], after[2] - before[2]
                      });
                  return result;
                });
          }

          @Override
          public <T> T withConnection(ConnectionWork<T> work) throws Exception {
            return own.withConnection(work);
          }
        };
    Idempotency idempotency = Idempotency.create(PostgresIdempotencyStore.builder(probing).build());

    for (int i = 0; i < 20; i++) {
      LocalOperation op = insert("hot-" + UUID.randomUUID());
      Outcome outcome =
          idempotency.execute(
              request("tenant-hot"), claimingFirst ? LocalOperation.claimingFirst(op) : op);
      assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    }

    // A completion that touched an indexed column (or a column of an index's predicate) would
    // write a new entry into every index of the record table, and leave more for vacuum.
    assertThat(updates).hasSize(20);
    assertThat(updates)
        .allSatisfy(
            u -> {
              assertThat(u[0]).as("records inserted in the transaction").isEqualTo(1);
              assertThat(u[1])
                  .as("record updates in the transaction")
                  .isEqualTo(claimingFirst ? 1 : 0);
              assertThat(u[2]).as("of which HOT").isEqualTo(u[1]);
            });
  }

  /**
   * Updates of the record table counted by this backend and not yet reported (this transaction's
   * and possibly earlier ones'), and how many of them were HOT: only a difference within one
   * transaction is this transaction's own.
   */
  private static long[] recordUpdates(Connection c) throws Exception {
    try (PreparedStatement ps =
            c.prepareStatement(
                "select n_tup_ins, n_tup_upd, n_tup_hot_upd from pg_stat_xact_user_tables"
                    + " where relname = 'idemkit_record'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  private static IdempotentRequest request(String tenant) {
    return new IdempotentRequest(
        ScopedKey.of(tenant, "create_probe", UUID.randomUUID().toString()),
        Fingerprint.of(Map.of("amount", "10.00")),
        Duration.ofHours(24));
  }

  private static LocalOperation insert(String ref) {
    return ctx -> {
      Connection c = ctx.unwrap(Connection.class);
      try (PreparedStatement ps = c.prepareStatement("insert into commit_probe (ref) values (?)")) {
        ps.setString(1, ref);
        ps.executeUpdate();
      }
      return OperationResult.success(
          StoredResponse.of(
              201,
              Map.of("Content-Type", "application/json"),
              ("{\"ref\":\"" + ref + "\"}").getBytes(StandardCharsets.UTF_8)));
    };
  }

  private static long count(String ref) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("select count(*) from commit_probe where ref = ?")) {
      ps.setString(1, ref);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
