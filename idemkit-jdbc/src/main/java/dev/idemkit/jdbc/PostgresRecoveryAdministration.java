package dev.idemkit.jdbc;

import static dev.idemkit.jdbc.RecordRows.bindKey;
import static dev.idemkit.jdbc.RecordRows.rows;
import static dev.idemkit.jdbc.RecordRows.toRecord;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What {@link PostgresIdempotencyStore} answers the recovery worker and operators: the records due
 * for recovery, the spacing and escalation of recovery attempts, the records awaiting their next
 * attempt or an operator, and an operator's verdict. Each statement stands beside the method that
 * runs it.
 */
final class PostgresRecoveryAdministration implements RecoveryAdministration {

  /** Live records whose recovery is due, oldest first. */
  private static final NamedSql NEEDING_RECOVERY =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      select r.* from idemkit_record r, clock
      where r.recovery_due is not null and r.recovery_due <= clock.now
        and r.state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
      order by r.recovery_due
      limit :limit
      """);

  /** {@link #NEEDING_RECOVERY} for the operations a worker can resume. */
  private static final NamedSql NEEDING_RECOVERY_OF =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      select r.* from idemkit_record r, clock
      where r.recovery_due is not null and r.recovery_due <= clock.now
        and r.state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
        and r.operation = any(:operations)
      order by r.recovery_due
      limit :limit
      """);

  /**
   * Spaces out the next recovery attempt of a record left unknown, or escalates it once its
   * attempts reached the limit. Applied only to a record nobody owns ({@code
   * UNKNOWN_REQUIRES_RECOVERY}, lease run out): a retry or a worker that took it over first makes
   * this a no-op. {@code previous} is the row as it was, to tell a new escalation from an old one.
   * The attempts count the first request's (its suspend counted one). The waits are the {@link
   * RecoverySchedule}'s, computed in Java ({@link #delaysMillis}) and bound as {@code :delays_ms}:
   * the wait after {@code n} attempts is element {@code n + 1}, and the last element, the longest
   * wait, stands for every later count. An escalated record stays unknown; a client's retry may
   * still attempt its recovery, each attempt after the next wait of the same schedule.
   */
  private static final NamedSql BACK_OFF_RECOVERY =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      schedule as (select cast(:delays_ms as bigint[]) as delays_ms),
      changed as (
        update idemkit_record r
        set recovery_due = case when r.recovery_attempts >= :max_attempts then null
              else clock.now
                + schedule.delays_ms[least(r.recovery_attempts + 1, cardinality(schedule.delays_ms))]
                  * interval '1 millisecond' end,
            locked_until = clock.now
              + schedule.delays_ms[least(r.recovery_attempts + 1, cardinality(schedule.delays_ms))]
                * interval '1 millisecond',
            escalated_at = case when r.recovery_attempts >= :max_attempts
              then coalesce(r.escalated_at, clock.now) end,
            updated_at = clock.now
        from clock, schedule, idemkit_record previous
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.state = 'UNKNOWN_REQUIRES_RECOVERY' and r.locked_until <= clock.now
          and previous.tenant = r.tenant and previous.operation = r.operation
          and previous.idem_key = r.idem_key
        returning r.tenant, r.operation, r.idem_key, r.state, r.recovery_point,
            r.pending_external, r.fencing_token, r.escalated_at, r.recovery_attempts,
            previous.escalated_at as previously_escalated_at, clock.now as db_now),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            recovery_point, pending_external, fencing_token, at, reason)
        select tenant, operation, idem_key, 'ESCALATED', state, recovery_point, pending_external,
            fencing_token, db_now, 'outcome still unknown after ' || recovery_attempts || ' attempts'
        from changed
        where escalated_at is not null and previously_escalated_at is null)
      select escalated_at is not null as escalated,
          previously_escalated_at is not null as was_escalated
      from changed
      """);

  /**
   * When the oldest unfinished record was claimed. The condition is the live index's predicate
   * ({@code idemkit_record_live_tenant_ix}, V11), which every committed record in progress or
   * awaiting recovery meets (each write that leaves a record live sets {@code recovery_due}, an
   * escalation sets {@code escalated_at}), so the scan reads that small index, not the table.
   */
  private static final String OLDEST_UNFINISHED =
      """
      select cast(extract(epoch from min(r.created_at)) * 1000000 as bigint) as created_at_us
      from idemkit_record r
      where (r.recovery_due is not null or r.escalated_at is not null)
        and r.state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
      """;

  /**
   * Records between two recovery attempts: unknown, not escalated, the next attempt ({@code
   * recovery_due}, which {@link #BACK_OFF_RECOVERY} sets with the lease) still to come. A record an
   * owner holds is {@code IN_PROGRESS}, so it is not one of them.
   */
  private static final NamedSql AWAITING_NEXT_ATTEMPT =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      select r.* from idemkit_record r, clock
      where r.state = 'UNKNOWN_REQUIRES_RECOVERY' and r.escalated_at is null
        and r.recovery_due > clock.now
      order by r.recovery_due
      limit :limit
      """);

  private static final NamedSql ESCALATED =
      NamedSql.of(
          """
      select r.* from idemkit_record r
      where r.escalated_at is not null and r.state = 'UNKNOWN_REQUIRES_RECOVERY'
      order by r.escalated_at
      limit :limit
      """);

  /**
   * An operator's verdict: kept in the record's data for the external phase's lookup, the record
   * due for recovery now with its attempts reset, and a history row saying who and why. Applied
   * only to a record waiting on an unknown outcome that nobody owns (an owner holds it {@code
   * IN_PROGRESS}); a recovery that took the record over first makes it a no-op the operator sees. A
   * record with no call pending (a local phase failed after an external effect) takes it too: no
   * lookup reads the verdict, the record is only made due again.
   *
   * <p>Two operators meet here: a record that already holds a verdict recovery has not acted on
   * (attempts still zero, as this statement left them) takes no second one, so the two never merge;
   * the second {@code update} waits for the first's row lock and then rechecks this condition on
   * the row the first wrote. A verdict acted on that left the outcome unknown counted an attempt,
   * so a new resolution is taken again.
   */
  private static final NamedSql RESOLVE =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r
        set recovery_data = ((coalesce(cast(r.recovery_data as jsonb), '{}'::jsonb) - :reference_key::text)
                || jsonb_build_object(:outcome_key::text, :outcome::text)
                || case when :reference::text is null then '{}'::jsonb
                        else jsonb_build_object(:reference_key::text, :reference::text) end)::text,
            recovery_attempts = 0, escalated_at = null,
            recovery_due = clock.now, locked_until = clock.now, updated_at = clock.now
        from clock
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.state = 'UNKNOWN_REQUIRES_RECOVERY'
          and not (r.recovery_attempts = 0
                   and cast(r.recovery_data as jsonb) ->> :outcome_key::text is not null)
        returning r.tenant, r.operation, r.idem_key, r.state, r.recovery_point,
            r.pending_external, r.fencing_token, clock.now as db_now),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            recovery_point, pending_external, fencing_token, at, actor, reason)
        select tenant, operation, idem_key, :event, state, recovery_point, pending_external,
            fencing_token, db_now, :actor, :reason
        from changed)
      select 1 from changed
      """);

  private final JdbcTransactions transactions;
  private final Clock clock;

  PostgresRecoveryAdministration(JdbcTransactions transactions, Clock clock) {
    this.transactions = transactions;
    this.clock = clock;
  }

  /** The clock parameter ({@link RecordRows#bindNow}). */
  private NamedSql.Parameters bindNow(NamedSql.Parameters p) throws SQLException {
    return RecordRows.bindNow(p, clock);
  }

  List<IdempotencyRecord> findNeedingRecovery(int limit) {
    return recordsAtNow(NEEDING_RECOVERY, limit);
  }

  List<IdempotencyRecord> findNeedingRecovery(int limit, Set<String> operations) {
    if (operations.isEmpty()) {
      return List.of();
    }
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(NEEDING_RECOVERY_OF.sql())) {
                    bindNow(NEEDING_RECOVERY_OF.bind(ps))
                        .set("operations", c.createArrayOf("text", operations.toArray()))
                        .set("limit", limit);
                    List<IdempotencyRecord> found = new ArrayList<>();
                    try (ResultSet rs = ps.executeQuery()) {
                      while (rs.next()) {
                        found.add(toRecord(rs));
                      }
                    }
                    return found;
                  }
                }));
  }

  @Override
  public RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(BACK_OFF_RECOVERY.sql())) {
                    bindKey(bindNow(BACK_OFF_RECOVERY.bind(ps)), id)
                        .set("max_attempts", maxAttempts)
                        .set(
                            "delays_ms",
                            c.createArrayOf(
                                "bigint",
                                delaysMillis(
                                    new RecoverySchedule(firstDelay, maxDelay, maxAttempts))));
                    try (ResultSet rs = ps.executeQuery()) {
                      if (!rs.next()) {
                        return RecoveryBackoff.NOT_PENDING;
                      }
                      if (rs.getBoolean("was_escalated")) {
                        return RecoveryBackoff.ALREADY_ESCALATED;
                      }
                      return rs.getBoolean("escalated")
                          ? RecoveryBackoff.ESCALATED
                          : RecoveryBackoff.DEFERRED;
                    }
                  }
                }));
  }

  /**
   * The schedule's wait after 0, 1, 2 … attempts, in milliseconds, up to the first that is the
   * longest wait: every later count waits as long. At most a few dozen, since each wait doubles the
   * one before.
   */
  private static Long[] delaysMillis(RecoverySchedule schedule) {
    List<Long> delays = new ArrayList<>();
    for (int attempts = 0; ; attempts++) {
      Duration delay = schedule.delayAfter(attempts);
      delays.add(delay.toMillis());
      if (delay.equals(schedule.maxDelay())) {
        return delays.toArray(Long[]::new);
      }
    }
  }

  Optional<Instant> oldestUnfinishedSince() {
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(OLDEST_UNFINISHED);
                      ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long micros = rs.getLong(1);
                    return rs.wasNull()
                        ? Optional.<Instant>empty()
                        : Optional.of(Instant.EPOCH.plus(micros, ChronoUnit.MICROS));
                  }
                }));
  }

  @Override
  public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
    return recordsAtNow(AWAITING_NEXT_ATTEMPT, limit);
  }

  /** The records {@code sql} selects, bound with the store's now and then {@code limit}. */
  private List<IdempotencyRecord> recordsAtNow(NamedSql sql, int limit) {
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
                    bindNow(sql.bind(ps)).set("limit", limit);
                    List<IdempotencyRecord> found = new ArrayList<>();
                    try (ResultSet rs = ps.executeQuery()) {
                      while (rs.next()) {
                        found.add(toRecord(rs));
                      }
                    }
                    return found;
                  }
                }));
  }

  @Override
  public List<IdempotencyRecord> findEscalated(int limit) {
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(ESCALATED.sql())) {
                    ESCALATED.bind(ps).set("limit", limit);
                    List<IdempotencyRecord> found = new ArrayList<>();
                    try (ResultSet rs = ps.executeQuery()) {
                      while (rs.next()) {
                        found.add(toRecord(rs));
                      }
                    }
                    return found;
                  }
                }));
  }

  @Override
  public boolean resolve(ScopedKey id, OperatorResolution resolution, String actor, String reason) {
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(RESOLVE.sql())) {
                    // An earlier verdict's reference goes: a NOT_APPLIED keeps none.
                    bindKey(bindNow(RESOLVE.bind(ps)), id)
                        .set("reference_key", OperatorResolution.REFERENCE_KEY)
                        .set("outcome_key", OperatorResolution.OUTCOME_KEY)
                        .set("outcome", resolution.outcome())
                        .set("reference", resolution.externalReference())
                        .set("event", "OPERATOR_RESOLVED_" + resolution.outcome())
                        .set("actor", actor)
                        .set("reason", reason);
                    return rows(ps) == 1;
                  }
                }));
  }
}
