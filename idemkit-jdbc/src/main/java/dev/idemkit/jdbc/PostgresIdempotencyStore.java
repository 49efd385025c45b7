package dev.idemkit.jdbc;

import static dev.idemkit.jdbc.RecordRows.bindKey;
import static dev.idemkit.jdbc.RecordRows.bindOwner;
import static dev.idemkit.jdbc.RecordRows.instant;
import static dev.idemkit.jdbc.RecordRows.rows;
import static dev.idemkit.jdbc.RecordRows.toRecord;

import dev.idemkit.ClaimWaitTimeoutException;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.CleanupRun;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.RecordCleanup;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import dev.idemkit.spi.TransactionWork;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The PostgreSQL store. Each decisive write is one statement: the claim is {@code INSERT … ON
 * CONFLICT DO NOTHING}, a takeover is one {@code UPDATE … WHERE fencing_token = ?} with its time
 * condition, and every owner write is conditional on the owner's fencing token.
 *
 * <p>Time: by default every statement compares against the database's {@code
 * statement_timestamp()}, one clock for all instances. A {@link Clock} given to the builder
 * replaces it (a seam for tests).
 *
 * <p>Connections come from {@link JdbcTransactions}: with the default one on a {@link DataSource}
 * the store runs its own transactions; a framework hands it the caller's.
 *
 * <p>Why this file is longer than 600 lines: it holds the statements of the SPI methods a request
 * runs (claim, read, takeover, renewal, recovery point, completion, the record written last,
 * suspension), each beside the method that binds it, with its race note; they share one set of
 * conventions (below) and are read together. What has a purpose of its own lives beside it: the
 * writes held back to the commit ({@link HeldWrite}), the store's transaction ({@link
 * JdbcStoreTransaction}), cleanup ({@link PostgresCleanupRun}), the recovery worker's and
 * operators' statements ({@link PostgresRecoveryAdministration}) and a record's columns ({@link
 * RecordRows}).
 */
public final class PostgresIdempotencyStore
    implements IdempotencyStore, RecoveryAdministration, RecordCleanup {

  /*
   * Every statement below is whole: what runs is what is written, its :name parameters replaced by
   * "?" once, when the class loads (NamedSql), and bound by name. The *_AND_COMMIT constants are a
   * whole statement followed by ";\ncommit", so that the driver sends both in one round trip; each
   * part runs as written. Conventions they share:
   *
   * - Time. A statement that compares times starts with the CTE
   *   `with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)`;
   *   :now is bound by bindNow (the builder's clock, else NULL: the database's time).
   * - The key. :tenant, :operation and :idem_key are the record's key (bindKey).
   * - Ownership. An owner write (renew, advance, finish, suspend) applies only while
   *   `r.fencing_token = :fencing_token` is the owner's token and the record is IN_PROGRESS
   *   (bindOwner); the caller decides on the number of rows it returns (one, or the owner lost the
   *   record).
   * - History. A takeover, a replacement, a suspension, a back-off or escalation, an operator's
   *   resolution, and the completion of a run that followed a takeover append their row to
   *   idemkit_record_history in the same statement: the update is a `changed` CTE that returns the
   *   record's new state, and the `logged` CTE inserts from it. An uninterrupted run writes no
   *   history: its claim, recovery point and completion are the record's own columns (see
   *   ADVANCE, FINISH).
   */

  /**
   * The claim: one insert that does nothing when the key has a record. It returns the new record,
   * or no row; then the store answers {@link ClaimAttempt.Raced} and the engine reads what is there
   * ({@link #READ}). A first request, by far the common case, costs this one statement; a retry of
   * a finished operation costs a second, or none when the engine reads first. (Reading the existing
   * record in the same statement, a data-modifying CTE with a second branch, cost every first
   * request more database time than the retries' round trip it saved.)
   *
   * <p>Two requests meet here: the second insert waits for the first's transaction on the primary
   * key, then does nothing if it committed (and inserts if it rolled back). It returns the time the
   * claim was made ({@code created_at}, the statement's time), in whole microseconds since the
   * epoch (the column's precision): every other column of the new record is a constant, a value the
   * store bound, or that time plus one (the lease end, the expiry), so the record is made from
   * those without reading its row back. (Decoding a {@code timestamptz} into a Java time cost the
   * driver more than binding the whole claim: 9-11% of a local operation's JVM time in
   * bench/store.)
   */
  private static final NamedSql CLAIM =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
          fencing_token, locked_until, created_at, updated_at, expires_at)
      select :tenant, :operation, :idem_key, :fingerprint, 'IN_PROGRESS', 1,
          clock.now + :lease_ms * interval '1 millisecond',
          clock.now, clock.now, clock.now + :ttl_ms * interval '1 millisecond'
      from clock
      on conflict (tenant, operation, idem_key) do nothing
      returning cast(extract(epoch from created_at) * 1000000 as bigint) as created_at_us
      """);

  /**
   * A local operation's record, written once, last (contract §5): inserted already finished with
   * its answer, after the operation's statements, as its transaction's last statement, and sent
   * with the commit ({@link #INSERT_FINISHED_AND_COMMIT}). The record is what {@link #FINISH_FRESH}
   * leaves after {@link #CLAIM}: first owner, lease ended, created and completed now, expiring a
   * window from now.
   *
   * <p>A plain insert, never {@code on conflict do nothing}: when the key has a record the insert
   * raises a unique violation on {@code idemkit_record_pk}, the server skips the commit sent with
   * it, and the transaction rolls back with every business write in it. (An insert that did nothing
   * on conflict would let that commit keep the business writes of a duplicate.) Two requests meet
   * here: the second insert waits on the first's uncommitted row, then raises once it commits (or
   * inserts, if it rolled back).
   */
  static final NamedSql INSERT_FINISHED =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
          fencing_token, locked_until, response_status, response_headers, response_body,
          response_schema_version, resource_id, created_at, updated_at, expires_at)
      select :tenant, :operation, :idem_key, :fingerprint, :state, 1, clock.now, :status, :headers,
          :body, :schema_version, :resource_id, clock.now, clock.now,
          clock.now + :ttl_ms * interval '1 millisecond'
      from clock
      """);

  /** {@link #INSERT_FINISHED} and the commit of its transaction, in one round trip. */
  static final NamedSql INSERT_FINISHED_AND_COMMIT = INSERT_FINISHED.andCommit();

  /**
   * A phased operation's record, written once in its first commit (contract §5): inserted after the
   * local phases up to a call's marker, as the transaction's last statement, and sent with the
   * commit ({@link #INSERT_IN_PROGRESS_AND_COMMIT}). The record is what {@link #CLAIM} then {@link
   * #ADVANCE} leave: first owner, in progress with its lease from now, the recovery point, the
   * call's marker and the phase data, due for recovery when the lease ends.
   *
   * <p>A plain insert, as {@link #INSERT_FINISHED} is and for the same reason: on a key that has a
   * record it raises a unique violation, the commit sent with it never runs, and none of the
   * transaction's business writes is kept; of concurrent inserts exactly one commits, so exactly
   * one request makes the call.
   */
  static final NamedSql INSERT_IN_PROGRESS =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
          fencing_token, locked_until, recovery_point, pending_external, recovery_data,
          recovery_due, created_at, updated_at, expires_at)
      select :tenant, :operation, :idem_key, :fingerprint, 'IN_PROGRESS', 1,
          clock.now + :lease_ms * interval '1 millisecond', :recovery_point, :pending_external,
          :recovery_data, clock.now + :lease_ms * interval '1 millisecond', clock.now, clock.now,
          clock.now + :ttl_ms * interval '1 millisecond'
      from clock
      """);

  /** {@link #INSERT_IN_PROGRESS} and the commit of its transaction, in one round trip. */
  static final NamedSql INSERT_IN_PROGRESS_AND_COMMIT = INSERT_IN_PROGRESS.andCommit();

  /**
   * The primary key a second record of one key violates ({@link #INSERT_FINISHED}, {@link
   * #INSERT_IN_PROGRESS}): the table's, or on a hash-partitioned table ({@link RecordLayout}) its
   * partition's, named after it (V19: {@code idemkit_record_p03_pk}).
   */
  static final Pattern RECORD_KEY = Pattern.compile("idemkit_record(_p[0-9]+)?_pk");

  /** PostgreSQL's SQLSTATE for a unique violation. */
  static final String UNIQUE_VIOLATION = "23505";

  private static final NamedSql READ =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      select r.*, clock.now as db_now
      from idemkit_record r, clock
      where tenant = :tenant and operation = :operation and idem_key = :idem_key
      """);

  /**
   * A takeover of an expired record for a new operation that keeps the previous operation's
   * metadata (fingerprint, state, resource, answer status, when it began) as a {@code
   * REPLACED_EXPIRED} history row rather than overwriting it silently. {@code previous} is the same
   * row joined as it was before the update: its columns in {@code returning} are the old values.
   * Its own statement, not a kind of {@link #TAKE_OVER}: it writes nearly every column for a new
   * operation and logs the previous one, where a takeover keeps the run and logs the new owner. Of
   * two retries replacing the same snapshot exactly one updates a row, as with {@link #TAKE_OVER}.
   */
  private static final NamedSql REPLACE_EXPIRED_KEEPING_HISTORY =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r set fingerprint = :fingerprint, state = 'IN_PROGRESS',
            fencing_token = r.fencing_token + 1,
            locked_until = clock.now + :lease_ms * interval '1 millisecond',
            recovery_point = null, pending_external = null, recovery_data = null,
            recovery_attempts = 0, response_status = null, response_headers = null,
            response_body = null, response_schema_version = null, resource_id = null,
            created_at = clock.now, updated_at = clock.now,
            expires_at = clock.now + :ttl_ms * interval '1 millisecond', body_dropped_at = null,
            recovery_due = null
        from clock, idemkit_record previous
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.fencing_token = :fencing_token and r.state = :seen_state
          and r.expires_at <= clock.now and r.state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
          and previous.tenant = r.tenant and previous.operation = r.operation
          and previous.idem_key = r.idem_key
        returning r.*, clock.now as db_now, previous.state as previous_state,
            previous.fencing_token as previous_fencing_token,
            previous.fingerprint as previous_fingerprint,
            previous.resource_id as previous_resource_id,
            previous.response_status as previous_response_status,
            previous.created_at as previous_created_at),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            fencing_token, at, fingerprint, resource_id, response_status, began_at)
        select tenant, operation, idem_key, 'REPLACED_EXPIRED', previous_state,
            previous_fencing_token, db_now, previous_fingerprint, previous_resource_id,
            previous_response_status, previous_created_at
        from changed)
      select * from changed
      """);

  /**
   * A takeover of a record someone else held, to go on with the same operation: a retry takes back
   * a record whose last attempt failed retryably ({@code RECLAIM_RETRYABLE}), or a retry or a
   * worker resumes a record whose owner's lease ran out, in progress ({@code RESUME_ABANDONED}) or
   * with its outcome unknown ({@code RECOVER_UNKNOWN}). One conditional update raises the fencing
   * token (so the previous owner's writes stop matching), gives the new owner its lease and keeps
   * the recovery point and data; the {@code logged} CTE appends the takeover to the history as
   * {@code TAKEOVER_RECLAIM_RETRYABLE}, {@code TAKEOVER_RESUME_ABANDONED} or {@code
   * TAKEOVER_RECOVER_UNKNOWN}, with the record as the takeover left it. It returns that record, or
   * no row.
   *
   * <p>Which takeover it is, is data: {@code :kind}, the {@link Takeover}'s name, picks the arm of
   * the {@code case} that makes the takeover legitimate, and names the history event. A kind with
   * no arm matches no row ({@code REPLACE_EXPIRED} is {@link #REPLACE_EXPIRED_KEEPING_HISTORY}).
   *
   * <p>Two instances taking over the same snapshot meet here: the record must still be in the state
   * and carry the token the caller saw ({@code :seen_state}, {@code :fencing_token}); the second
   * update waits on the first's row lock, then rechecks the where clause on the row the first
   * wrote, whose token moved, and updates nothing. Exactly one updates a row.
   */
  private static final NamedSql TAKE_OVER =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r set state = 'IN_PROGRESS',
            fencing_token = r.fencing_token + 1,
            locked_until = clock.now + :lease_ms * interval '1 millisecond',
            recovery_due = clock.now + :lease_ms * interval '1 millisecond', updated_at = clock.now
        from clock
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.fencing_token = :fencing_token and r.state = :seen_state
          and case :kind
            when 'RECLAIM_RETRYABLE'
              then r.state = 'FAILED_RETRYABLE' and r.expires_at > clock.now
            when 'RESUME_ABANDONED'
              then r.state = 'IN_PROGRESS' and r.locked_until <= clock.now
            when 'RECOVER_UNKNOWN'
              then r.state = 'UNKNOWN_REQUIRES_RECOVERY' and r.locked_until <= clock.now
            end
        returning r.*, clock.now as db_now),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            recovery_point, pending_external, fencing_token, at)
        select tenant, operation, idem_key, 'TAKEOVER_' || :kind, state, recovery_point,
            pending_external, fencing_token, db_now
        from changed)
      select * from changed
      """);

  /** The owner extends its lease; no history (a renewal changes no state). */
  private static final NamedSql RENEW =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      update idemkit_record r
      set locked_until = clock.now + :lease_ms * interval '1 millisecond',
          recovery_due = clock.now + :lease_ms * interval '1 millisecond', updated_at = clock.now
      from clock
      where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
        and r.fencing_token = :fencing_token and r.state = 'IN_PROGRESS'
      returning r.locked_until
      """);

  /**
   * The owner records a recovery point after a phase. No history row: an uninterrupted run keeps
   * none (contract §5); a takeover logs the recovery point it resumes from, and the record itself
   * says where its run is.
   *
   * <p>Like {@link #FINISH} it fails unless it updated exactly one row ({@code
   * idemkit_require_owned}, V18), so that the marker of a call, its transaction's last write, can
   * be sent with the commit ({@link #ADVANCE_AND_COMMIT}).
   */
  static final NamedSql ADVANCE =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r
        set recovery_point = :recovery_point, pending_external = :pending_external,
            recovery_data = :recovery_data,
            recovery_due = r.locked_until, updated_at = clock.now
        from clock
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.fencing_token = :fencing_token and r.state = 'IN_PROGRESS'
        returning 1)
      select idemkit_require_owned(count(*)) from changed
      """);

  /** {@link #ADVANCE} and the commit of its transaction in one round trip. */
  static final NamedSql ADVANCE_AND_COMMIT = ADVANCE.andCommit();

  /**
   * The owner stores the outcome. The record's window restarts at its completion: {@code
   * expires_at} becomes at least now plus the window it was claimed with ({@code expires_at -
   * created_at}, both set together by the claim and by a replacement), so an operation that
   * completes late, e.g. recovered after its window passed, is answered from its record for a whole
   * window after its outcome exists. A completion within a second of that bound leaves {@code
   * expires_at} as the claim set it: {@code expires_at} is indexed (cleanup walks it), so changing
   * it would make every completion a non-HOT update, with new entries in every index of the table;
   * left alone, the completion changes no indexed column and stays on its page.
   *
   * <p>Only a record whose run was interrupted gets a {@code FINISH} history row: one a takeover or
   * a replacement gave a token above the first ({@code fencing_token > 1}), whose history already
   * holds that takeover. An uninterrupted run, phased or not, writes none (contract §5): its claim,
   * recovery point and completion are the record's own columns ({@code created_at}, {@code
   * recovery_point}, {@code pending_external}, {@code updated_at}), and the admin view derives its
   * happy path from them. A single-transaction operation's completion is {@link #FINISH_FRESH}, the
   * update alone.
   *
   * <p>It ends by failing unless it updated exactly one row ({@code idemkit_require_owned}, V18),
   * so that it can be sent with the commit ({@link #FINISH_AND_COMMIT}): the fencing condition in
   * the where clause is the ownership check, and no renewal or read before it is needed.
   */
  static final NamedSql FINISH =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r
        set state = :state, locked_until = clock.now, pending_external = null,
            response_status = :status, response_headers = :headers, response_body = :body,
            response_schema_version = :schema_version, resource_id = :resource_id, recovery_due = null,
            updated_at = clock.now,
            expires_at = case
                when clock.now + (r.expires_at - r.created_at) > r.expires_at + interval '1 second'
                then clock.now + (r.expires_at - r.created_at)
                else r.expires_at end
        from clock
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.fencing_token = :fencing_token and r.state = 'IN_PROGRESS'
        returning r.tenant, r.operation, r.idem_key, r.state, r.recovery_point,
            r.pending_external, r.fencing_token, clock.now as db_now),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            recovery_point, pending_external, fencing_token, at)
        select tenant, operation, idem_key, 'FINISH', state, recovery_point, pending_external,
            fencing_token, db_now
        from changed
        where fencing_token > 1)
      select idemkit_require_owned(count(*)) from changed
      """);

  /**
   * {@link #FINISH} and the commit of its transaction in one round trip. FINISH fails its statement
   * when it updated no row ({@code idemkit_require_owned}, V18: SQLSTATE {@value #NOT_OWNED}), so
   * the server skips the {@code commit} sent with it and the transaction rolls back with every
   * business write in it: a zombie owner's completion never commits anything.
   */
  static final NamedSql FINISH_AND_COMMIT = FINISH.andCommit();

  /** The SQLSTATE of a fenced write that matched no row (V18's {@code idemkit_require_owned}). */
  static final String NOT_OWNED = "IK001";

  /**
   * {@link #FINISH} for a record claimed in the same transaction and never advanced: a
   * single-transaction operation, whose record has no history to write. The update alone, without
   * the history CTE: the statement every local operation ends with stays as cheap as an update.
   */
  static final NamedSql FINISH_FRESH =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now)
      update idemkit_record r
      set state = :state, locked_until = clock.now, pending_external = null,
          response_status = :status, response_headers = :headers, response_body = :body,
          response_schema_version = :schema_version, resource_id = :resource_id, recovery_due = null,
          updated_at = clock.now,
          expires_at = case
              when clock.now + (r.expires_at - r.created_at) > r.expires_at + interval '1 second'
              then clock.now + (r.expires_at - r.created_at)
              else r.expires_at end
      from clock
      where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
        and r.fencing_token = :fencing_token and r.state = 'IN_PROGRESS'
      """);

  /**
   * {@link #FINISH_FRESH} and the commit of its transaction, two whole statements sent in one round
   * trip (the driver sends both before it waits): a local operation's completion is the last write
   * of its transaction, so the commit need not wait for the driver to hear back from it.
   */
  static final NamedSql FINISH_FRESH_AND_COMMIT = FINISH_FRESH.andCommit();

  /**
   * The owner gives the record up without an outcome (failed retryably, or outcome unknown): due
   * for recovery now when the new state is live, one more recovery attempt counted when unknown.
   */
  private static final NamedSql SUSPEND =
      NamedSql.of(
          """
      with clock as (select coalesce(cast(:now as timestamptz), statement_timestamp()) as now),
      changed as (
        update idemkit_record r
        set state = :state, locked_until = clock.now,
            recovery_due = case when :due_now then clock.now end,
            recovery_attempts = r.recovery_attempts + :attempts_counted, updated_at = clock.now
        from clock
        where r.tenant = :tenant and r.operation = :operation and r.idem_key = :idem_key
          and r.fencing_token = :fencing_token and r.state = 'IN_PROGRESS'
        returning r.tenant, r.operation, r.idem_key, r.state, r.recovery_point,
            r.pending_external, r.fencing_token, clock.now as db_now),
      logged as (
        insert into idemkit_record_history (tenant, operation, idem_key, event, state,
            recovery_point, pending_external, fencing_token, at)
        select tenant, operation, idem_key, 'SUSPEND', state, recovery_point, pending_external,
            fencing_token, db_now
        from changed)
      select 1 from changed
      """);

  /** PostgreSQL's SQLSTATE for a statement canceled (here: the claim, past its wait). */
  private static final String QUERY_CANCELED = "57014";

  /** PostgreSQL's SQLSTATE for a lock wait that ran into lock_timeout. */
  private static final String LOCK_NOT_AVAILABLE = "55P03";

  private final JdbcTransactions transactions;
  private final Clock clock;
  private final Duration claimWait;
  private final PostgresQuotaSync quotaSync;
  private final PostgresRecoveryAdministration recovery;

  /**
   * How many requests of one key may be in its claim statement at once on this instance (with a
   * bounded claim wait): the key's first request, which claims it, and one that waits on that
   * claim.
   */
  private static final int CLAIMS_UNDER_WAY_PER_KEY = 2;

  /**
   * Per key, how many of its claim statements run now on this instance (only with a bounded claim
   * wait); a key leaves the map when its last one ends.
   */
  private final ConcurrentHashMap<ScopedKey, Integer> claimsUnderWay = new ConcurrentHashMap<>();

  private PostgresIdempotencyStore(JdbcTransactions transactions, Clock clock, Duration claimWait) {
    this.transactions = Objects.requireNonNull(transactions);
    this.clock = clock;
    this.claimWait = claimWait;
    this.quotaSync = new PostgresQuotaSync(transactions, clock);
    this.recovery = new PostgresRecoveryAdministration(transactions, clock);
  }

  /** A store on {@code dataSource}, running its own transactions, on the database's clock. */
  public static PostgresIdempotencyStore create(DataSource dataSource) {
    return builder(JdbcTransactions.of(dataSource)).build();
  }

  public static Builder builder(JdbcTransactions transactions) {
    return new Builder(transactions);
  }

  /** Builds a {@link PostgresIdempotencyStore}. */
  public static final class Builder {
    private final JdbcTransactions transactions;
    private Clock clock;
    private Duration claimWait;

    private Builder(JdbcTransactions transactions) {
      this.transactions = transactions;
    }

    /**
     * Compares leases and windows against {@code clock} instead of the database's time. Only for
     * tests and single-instance tools: instances must share one clock.
     */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * Bounds how long a claim waits for another request's uncommitted claim of the same key (the
     * claim statement's query timeout, in whole seconds, rounded up; the business statements after
     * it are not bounded); past it the claim throws {@link ClaimWaitTimeoutException}, its
     * transaction rolls back, and the engine answers "in progress". At most two requests per key
     * and instance are in the claim statement at a time (the first, which usually claims the key,
     * and one that waits on it); the others of that key answer "in progress" at once. A flood of
     * one key then holds at most two connections per instance, for at most that long, instead of
     * the pool until the first request ends. Unset or zero: every request waits until the other
     * request ends.
     */
    public Builder claimWait(Duration claimWait) {
      this.claimWait = claimWait == null || claimWait.isZero() ? null : claimWait;
      return this;
    }

    public PostgresIdempotencyStore build() {
      return new PostgresIdempotencyStore(transactions, clock, claimWait);
    }
  }

  private static Connection connection(StoreTransaction tx) throws SQLException {
    return ((JdbcStoreTransaction) tx).connection();
  }

  /**
   * Runs {@code work} in a transaction. Its last write, a local operation's completion, is held
   * back to the end; when the transaction commits right after the work ({@link
   * JdbcTransactions#commitsRightAfterWork}: always on the store's own {@link
   * JdbcTransactions#of(DataSource) DataSource transactions}), it travels with the commit in one
   * round trip, otherwise it is sent alone.
   */
  @Override
  public <T> T inTransaction(TransactionWork<T> work) throws Exception {
    return transactions.inTransaction(
        c -> {
          JdbcStoreTransaction tx = new JdbcStoreTransaction(c);
          T result = work.run(tx);
          if (transactions.commitsRightAfterWork(c)) {
            tx.sendHeldWithCommit();
          } else {
            tx.connection();
          }
          return result;
        });
  }

  /**
   * With a bounded claim wait, at most {@value #CLAIMS_UNDER_WAY_PER_KEY} requests of this instance
   * are in a key's claim statement at a time; a further one of the same key is answered "in
   * progress" at once ({@link ClaimWaitTimeoutException}) instead of holding a connection for the
   * whole wait. A same-key flood then holds at most two connections per instance, and the pool
   * stays free for other requests.
   *
   * <p>Why two, not one. Which threads meet here: the key's first request, inserting its claim
   * (which waits on nothing and returns within a round trip), and a second request of the same key
   * released at the same moment (a double submit, a client's hedged retry). Counting the first
   * request's own insert as "the one waiter", the second found the key taken and was answered "in
   * progress" at once, where it should have waited on the claim for the first one's answer (a
   * replay, or the mismatch of another command). With two, it waits. The price: when the first
   * request's insert has already returned, two later requests may both wait on its commit, each
   * holding a connection; two per key and instance, never the pool. (Which of the first two owns
   * the key is decided by the database, not here: this only bounds how many may wait.)
   */
  @Override
  public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
    if (claimWait == null) {
      return claimNow(tx, record, lease);
    }
    ScopedKey id = record.id();
    if (claimsUnderWay.merge(id, 1, Integer::sum) > CLAIMS_UNDER_WAY_PER_KEY) {
      leaveClaim(id);
      throw new ClaimWaitTimeoutException(id, Duration.ZERO);
    }
    try {
      return claimNow(tx, record, lease);
    } finally {
      leaveClaim(id);
    }
  }

  /** Counts one claim statement of {@code id} as ended; the last one takes the key off the map. */
  private void leaveClaim(ScopedKey id) {
    claimsUnderWay.computeIfPresent(id, (key, under) -> under == 1 ? null : under - 1);
  }

  private ClaimAttempt claimNow(StoreTransaction tx, NewRecord record, Duration lease) {
    ScopedKey id = record.id();
    try (PreparedStatement ps = connection(tx).prepareStatement(CLAIM.sql())) {
      if (claimWait != null) {
        // Bounds this statement only (the driver cancels it past the timeout), never the business
        // statements after it in the same transaction; no extra round trip unless it fires.
        ps.setQueryTimeout((int) Math.max(1, (claimWait.toMillis() + 999) / 1000));
      }
      bindKey(bindNow(CLAIM.bind(ps)), id)
          .set("fingerprint", record.fingerprint().toString())
          .set("lease_ms", lease.toMillis())
          .set("ttl_ms", record.ttl().toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return new ClaimAttempt.Raced();
        }
        ((JdbcStoreTransaction) tx).claimedAfresh = id;
        long micros = rs.getLong(1);
        Instant createdAt =
            Instant.ofEpochSecond(
                Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
        return new ClaimAttempt.Inserted(
            new IdempotencyRecord(
                id,
                record.fingerprint(),
                RecordState.IN_PROGRESS,
                1,
                createdAt.plusMillis(lease.toMillis()),
                null,
                null,
                Map.of(),
                0,
                null,
                createdAt,
                createdAt,
                createdAt.plusMillis(record.ttl().toMillis())));
      }
    } catch (SQLException e) {
      if (claimWait != null
          && (QUERY_CANCELED.equals(e.getSQLState())
              || LOCK_NOT_AVAILABLE.equals(e.getSQLState()))) {
        throw new ClaimWaitTimeoutException(id, claimWait);
      }
      throw failure("claim", id, e);
    }
  }

  @Override
  public Optional<Snapshot> read(StoreTransaction tx, ScopedKey id) {
    try {
      return readOn(connection(tx), id);
    } catch (SQLException e) {
      throw failure("read", id, e);
    }
  }

  private Optional<Snapshot> readOn(Connection c, ScopedKey id) {
    try (PreparedStatement ps = c.prepareStatement(READ.sql())) {
      bindKey(bindNow(READ.bind(ps)), id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? Optional.of(new Snapshot(toRecord(rs), instant(rs, "db_now")))
            : Optional.empty();
      }
    } catch (SQLException e) {
      throw failure("read", id, e);
    }
  }

  @Override
  public Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, NewRecord record, Duration lease) {
    IdempotencyRecord r = seen.record();
    boolean replace = kind == Takeover.REPLACE_EXPIRED;
    NamedSql sql = replace ? REPLACE_EXPIRED_KEEPING_HISTORY : TAKE_OVER;
    try (PreparedStatement ps = connection(tx).prepareStatement(sql.sql())) {
      NamedSql.Parameters p =
          bindKey(bindNow(sql.bind(ps)), r.id())
              .set("fencing_token", r.fencingToken())
              .set("seen_state", r.state().name())
              .set("lease_ms", lease.toMillis());
      if (replace) {
        p.set("fingerprint", record.fingerprint().toString())
            .set("ttl_ms", record.ttl().toMillis());
      } else {
        p.set("kind", kind.name());
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(toRecord(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw failure("take over", r.id(), e);
    }
  }

  @Override
  public Ownership renew(StoreTransaction tx, Ownership owner, Duration lease) {
    try (PreparedStatement ps = connection(tx).prepareStatement(RENEW.sql())) {
      bindOwner(bindNow(RENEW.bind(ps)), owner).set("lease_ms", lease.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new LostOwnershipException(owner.id(), owner.fencingToken());
        }
        return new Ownership(owner.id(), owner.fencingToken(), instant(rs, "locked_until"));
      }
    } catch (SQLException e) {
      throw failure("renew", owner.id(), e);
    }
  }

  @Override
  public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
    forgetFreshClaim(tx, owner);
    hold(tx, owner.id(), new HeldWrite.FencedAdvance(checkpoint, owner, now()));
  }

  /**
   * Holds {@code write} back to the end of {@code tx}; a write held before it is sent first, so
   * none is ever dropped and the writes keep their order.
   */
  private static void hold(StoreTransaction tx, ScopedKey id, HeldWrite write) {
    JdbcStoreTransaction t = (JdbcStoreTransaction) tx;
    try {
      t.connection();
    } catch (SQLException e) {
      throw new IdempotencyStoreException("Could not write the record of " + id, e);
    }
    t.lastWrite = write;
  }

  @Override
  public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
    hold(tx, owner.id(), new HeldWrite.Completion(!isFreshClaim(tx, owner), answer, owner, now()));
  }

  /**
   * Held back to the end of the transaction, as a completion is: sent with the commit when the
   * store commits right after the work, alone otherwise, and before anything else the transaction
   * sends after it.
   */
  @Override
  public void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer) {
    ((JdbcStoreTransaction) tx).lastWrite = new HeldWrite.FinishedInsert(record, answer, now());
  }

  @Override
  public Ownership insertInProgress(
      StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
    Instant now = clock == null ? null : clock.instant();
    hold(
        tx,
        record.id(),
        new HeldWrite.InProgressInsert(
            record, lease, checkpoint, now == null ? null : now.toString()));
    return new Ownership(record.id(), 1, (now == null ? Instant.now() : now).plus(lease));
  }

  /** The test clock's time for a held write, or null: the database's own. */
  private String now() {
    return clock == null ? null : clock.instant().toString();
  }

  /**
   * Whether {@code owner}'s record was claimed afresh in {@code tx} and not advanced since: then it
   * has no recovery point, no pending call and its first owner, and its completion writes no
   * history.
   */
  private static boolean isFreshClaim(StoreTransaction tx, Ownership owner) {
    return owner.id().equals(((JdbcStoreTransaction) tx).claimedAfresh)
        && owner.fencingToken() == 1;
  }

  private static void forgetFreshClaim(StoreTransaction tx, Ownership owner) {
    JdbcStoreTransaction t = (JdbcStoreTransaction) tx;
    if (owner.id().equals(t.claimedAfresh)) {
      t.claimedAfresh = null;
    }
  }

  @Override
  public void suspend(StoreTransaction tx, Ownership owner, RecordState state) {
    if (state.isReplayable()) {
      throw new IllegalArgumentException("suspend does not take " + state);
    }
    try (PreparedStatement ps = connection(tx).prepareStatement(SUSPEND.sql())) {
      bindOwner(bindNow(SUSPEND.bind(ps)), owner)
          .set("state", state.name())
          .set("due_now", state.isLive())
          .set("attempts_counted", state == RecordState.UNKNOWN_REQUIRES_RECOVERY ? 1 : 0);
      requireOwned(rows(ps), owner);
    } catch (SQLException e) {
      throw failure("suspend", owner.id(), e);
    }
  }

  /** One auto-commit read: the record and the database's time. */
  @Override
  public Optional<Snapshot> peek(ScopedKey id) {
    return call(() -> transactions.withConnection(c -> readOn(c, id)));
  }

  @Override
  public Optional<IdempotencyRecord> find(ScopedKey id) {
    return call(() -> transactions.withConnection(c -> readOn(c, id).map(Snapshot::record)));
  }

  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit) {
    return recovery.findNeedingRecovery(limit);
  }

  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit, Set<String> operations) {
    return recovery.findNeedingRecovery(limit, operations);
  }

  /**
   * Each walk's batch is one short auto-commit statement that skips locked rows, so cleanup never
   * waits on, nor holds up, live traffic for long. The body walk of a run's next batch goes on from
   * where its previous batch stopped, and each run starts over, so live records past their window
   * are read once per run, not once per batch ({@link PostgresCleanupRun#DROP_BODIES}).
   */
  @Override
  public CleanupRun beginRun() {
    return new PostgresCleanupRun(transactions, clock);
  }

  @Override
  public RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
    return recovery.backOffRecovery(id, firstDelay, maxDelay, maxAttempts);
  }

  @Override
  public Optional<Instant> oldestUnfinishedSince() {
    return recovery.oldestUnfinishedSince();
  }

  @Override
  public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
    return recovery.findAwaitingNextAttempt(limit);
  }

  @Override
  public List<IdempotencyRecord> findEscalated(int limit) {
    return recovery.findEscalated(limit);
  }

  @Override
  public boolean resolve(ScopedKey id, OperatorResolution resolution, String actor, String reason) {
    return recovery.resolve(id, resolution, actor, reason);
  }

  /**
   * This store's capabilities: it is its own {@link RecoveryAdministration} and {@link
   * RecordCleanup}, and shares the instances' quota counts ({@link QuotaSync}) through this
   * database with a {@link PostgresQuotaSync} on this store's transactions and clock.
   */
  @Override
  public <T> Optional<T> capability(Class<T> type) {
    return type == QuotaSync.class
        ? Optional.of(type.cast(quotaSync))
        : IdempotencyStore.super.capability(type);
  }

  // ---- binding and mapping ------------------------------------------------------------------

  /** The clock parameter ({@link RecordRows#bindNow}). */
  private NamedSql.Parameters bindNow(NamedSql.Parameters p) throws SQLException {
    return RecordRows.bindNow(p, clock);
  }

  private static void requireOwned(int updated, Ownership owner) {
    if (updated != 1) {
      throw new LostOwnershipException(owner.id(), owner.fencingToken());
    }
  }

  private static IdempotencyStoreException failure(String what, ScopedKey id, SQLException e) {
    return new IdempotencyStoreException("Could not " + what + " the record of " + id, e);
  }

  @FunctionalInterface
  interface Call<T> {
    T run() throws Exception;
  }

  static <T> T call(Call<T> call) {
    try {
      return call.run();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IdempotencyStoreException("Idempotency store call failed", e);
    }
  }
}
