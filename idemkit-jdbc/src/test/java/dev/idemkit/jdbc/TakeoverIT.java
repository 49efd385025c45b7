package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.Takeover;
import dev.idemkit.testing.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The takeovers of a record someone else held, each one conditional write whose condition is the
 * takeover's kind, on the embedded PostgreSQL: of many instances taking over one snapshot at once
 * (each on its own connection, released together) exactly one updates the record and logs its
 * takeover; a takeover whose condition does not hold changes nothing and logs nothing.
 */
class TakeoverIT {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(1);
  private static final String FINGERPRINT = Fingerprint.of(Map.of("amount", "10.00")).toString();

  private static DataSource dataSource;

  private final String tenant = "takeover-" + UUID.randomUUID().toString().substring(0, 8);
  private final MutableClock clock = new MutableClock(Instant.parse("2031-05-06T07:08:09.123Z"));
  private final PostgresIdempotencyStore store =
      PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource)).clock(clock).build();

  @BeforeAll
  static void database() {
    dataSource = TestDatabase.embedded().dataSource();
  }

  @ParameterizedTest
  @EnumSource(names = {"RECLAIM_RETRYABLE", "RESUME_ABANDONED", "RECOVER_UNKNOWN"})
  void ofManyRacersOnOneSnapshotExactlyOneTakesTheRecordOverAndLogsIt(Takeover kind)
      throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "pay", "k-" + kind);
    Instant now = clock.instant();
    insert(id, takeable(kind), now.minusSeconds(1), now.plus(TTL));
    Snapshot seen = store.peek(id).orElseThrow();
    // A fingerprint the takeover must not write: only a replacement starts a new operation.
    Fingerprint other = Fingerprint.of(Map.of("amount", "99.00"));

    List<Optional<IdempotencyRecord>> taken =
        IsolationIT.race(
            () ->
                store.inTransaction(
                    tx -> store.takeOver(tx, seen, kind, new NewRecord(id, other, TTL), LEASE)));

    List<IdempotencyRecord> winners = taken.stream().flatMap(Optional::stream).toList();
    assertThat(winners).as("racers that took the record over").hasSize(1);
    IdempotencyRecord record = winners.get(0);
    assertThat(record).as("what the takeover returns is the stored record").isEqualTo(stored(id));
    assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(record.fencingToken()).isEqualTo(4);
    assertThat(record.lockedUntil()).isEqualTo(now.plus(LEASE));
    assertThat(record.fingerprint().toString()).isEqualTo(FINGERPRINT);
    assertThat(record.recoveryPoint()).isEqualTo("CREATED");
    assertThat(record.pendingExternal()).isEqualTo("CHARGED");
    assertThat(record.recoveryData()).isEqualTo(Map.of("payment", "p-1"));
    assertThat(record.expiresAt()).isEqualTo(now.plus(TTL));
    assertThat(column(id, "recovery_due")).isEqualTo(Timestamp.from(now.plus(LEASE)));
    assertThat(history(id))
        .containsExactly(
            List.of(
                "TAKEOVER_" + kind, "IN_PROGRESS", 4L, "CREATED", "CHARGED", Timestamp.from(now)));
  }

  static Stream<Arguments> conditionsThatDoNotHold() {
    return Stream.of(
        // the retryable record's window has passed (a replacement's turn), or ends right now
        Arguments.of(Takeover.RECLAIM_RETRYABLE, "FAILED_RETRYABLE", -1, -1),
        Arguments.of(Takeover.RECLAIM_RETRYABLE, "FAILED_RETRYABLE", -1, 0),
        // the owner's lease still runs
        Arguments.of(Takeover.RESUME_ABANDONED, "IN_PROGRESS", 1, 3600),
        Arguments.of(Takeover.RECOVER_UNKNOWN, "UNKNOWN_REQUIRES_RECOVERY", 1, 3600),
        // the record is in another takeover's state
        Arguments.of(Takeover.RECLAIM_RETRYABLE, "IN_PROGRESS", -1, 3600),
        Arguments.of(Takeover.RESUME_ABANDONED, "UNKNOWN_REQUIRES_RECOVERY", -1, 3600),
        Arguments.of(Takeover.RECOVER_UNKNOWN, "FAILED_RETRYABLE", -1, 3600),
        // a finished record is never taken over, only replaced after its window
        Arguments.of(Takeover.RECLAIM_RETRYABLE, "COMPLETED", -1, 3600));
  }

  @ParameterizedTest
  @MethodSource("conditionsThatDoNotHold")
  void aTakeoverWhoseConditionDoesNotHoldChangesNothingAndLogsNothing(
      Takeover kind, String state, int leaseEndsInSeconds, int expiresInSeconds) throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "pay", "k-" + kind + "-" + state);
    Instant now = clock.instant();
    insert(id, state, now.plusSeconds(leaseEndsInSeconds), now.plusSeconds(expiresInSeconds));
    Snapshot seen = store.peek(id).orElseThrow();

    Optional<IdempotencyRecord> taken =
        store.inTransaction(
            tx ->
                store.takeOver(
                    tx, seen, kind, new NewRecord(id, seen.record().fingerprint(), TTL), LEASE));

    assertThat(taken).isEmpty();
    assertThat(stored(id)).isEqualTo(seen.record());
    assertThat(history(id)).isEmpty();
  }

  private static String takeable(Takeover kind) {
    return switch (kind) {
      case RECLAIM_RETRYABLE -> "FAILED_RETRYABLE";
      case RESUME_ABANDONED -> "IN_PROGRESS";
      case RECOVER_UNKNOWN -> "UNKNOWN_REQUIRES_RECOVERY";
      case REPLACE_EXPIRED -> throw new IllegalArgumentException("not a takeover of one run");
    };
  }

  /** A record someone held: third owner, past its first phase, its call's marker set. */
  private void insert(ScopedKey id, String state, Instant lockedUntil, Instant expiresAt)
      throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,"
                    + " fencing_token, locked_until, recovery_point, pending_external,"
                    + " recovery_data, recovery_due, created_at, updated_at, expires_at)"
                    + " values (?, ?, ?, ?, ?, 3, ?, 'CREATED', 'CHARGED',"
                    + " '{\"payment\":\"p-1\"}', ?, ?, ?, ?)")) {
      Timestamp began = Timestamp.from(clock.instant().minusSeconds(60));
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      ps.setString(4, FINGERPRINT);
      ps.setString(5, state);
      ps.setTimestamp(6, Timestamp.from(lockedUntil));
      ps.setTimestamp(7, Timestamp.from(lockedUntil));
      ps.setTimestamp(8, began);
      ps.setTimestamp(9, began);
      ps.setTimestamp(10, Timestamp.from(expiresAt));
      ps.executeUpdate();
    }
  }

  private IdempotencyRecord stored(ScopedKey id) {
    return store.find(id).orElseThrow();
  }

  private Object column(ScopedKey id, String column) throws Exception {
    return rows("select " + column + " from idemkit_record", id).get(0).get(0);
  }

  /** The history of {@code id}: event, state, fencing token, recovery point, pending call, time. */
  private List<List<Object>> history(ScopedKey id) throws Exception {
    return rows(
        "select event, state, fencing_token, recovery_point, pending_external, at"
            + " from idemkit_record_history",
        id);
  }

  /** The rows {@code select} reads of {@code id}'s key, each its columns' values in order. */
  private static List<List<Object>> rows(String select, ScopedKey id) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                select + " where tenant = ? and operation = ? and idem_key = ? order by 1")) {
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      List<List<Object>> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        int columns = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= columns; i++) {
            row.add(rs.getObject(i));
          }
          rows.add(row);
        }
      }
      return rows;
    }
  }
}
