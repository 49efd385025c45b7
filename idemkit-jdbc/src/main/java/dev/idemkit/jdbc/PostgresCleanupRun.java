package dev.idemkit.jdbc;

import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;

/**
 * A cleanup run of {@link PostgresIdempotencyStore}, with its statements: where its body walk goes
 * on ({@link #DROP_BODIES}); null: from the start. Its batches follow each other on one thread.
 * Runs of other threads and instances have positions of their own, and {@code skip locked} keeps
 * their batches apart.
 */
final class PostgresCleanupRun implements CleanupRun {

  /**
   * One batch of dropping expired bodies. The walk reads {@code idemkit_record_body_cleanup_ix} in
   * its own order ({@code expires_at}, only rows whose body is still there) and stops after {@code
   * limit} rows: the time bound is a value fixed for the statement, not a join, so a batch costs
   * what it drops however large the backlog. Every expired row is marked, body or not, so the walk
   * never passes it again. The walk hands the update the rows' physical addresses ({@code ctid}),
   * which stay put while the walk's {@code for update} lock holds them: each row is reached again
   * directly, not by a second lookup in the primary key.
   *
   * <p>Live records past their window ({@code IN_PROGRESS} or {@code UNKNOWN_REQUIRES_RECOVERY}: an
   * owner that died and nobody retried, an outcome escalated to an operator) stay in the index and
   * are never dropped, so a walk from the index's start would read all of them again in every
   * batch: a few hundred thousand of them made every batch of a run as slow as reading them all.
   * The walk goes on instead from the time of the last row the previous batch of the same run
   * dropped (keyset on {@code expires_at}, from that time on: rows of that same time not dropped
   * yet are still ahead), or, once a batch of the run reached the end, from that batch's time bound
   * (every row up to it was read), and passes each of them once per run, not once per batch. Only
   * live records of exactly that time, to the microsecond, are read again. A start of {@code null}
   * reads the index from its beginning.
   *
   * <p>Two instances meet here: {@code skip locked} hands each of them other rows, and a row one of
   * them marked and committed no longer matches {@code body_dropped_at is null} when the other
   * rechecks it, so no row is dropped twice. A retry taking the expired key over ({@code
   * REPLACE_EXPIRED}) and cleanup lock the same row: whichever comes second waits or skips it, and
   * a row made live again fails the state condition on recheck. The statement answers how many it
   * dropped, the time of the last one and its time bound: where the next batch goes on.
   */
  private static final String DROP_BODIES =
      """
      with batch as (
        select ctid, expires_at from idemkit_record
        where body_dropped_at is null
          and expires_at <= coalesce(cast(? as timestamptz), statement_timestamp())
                            - ? * interval '1 millisecond'
          and expires_at >= coalesce(cast(? as timestamptz), '-infinity')
          and state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
        order by expires_at
        limit ?
        for update skip locked),
      dropped as (
        update idemkit_record r
        set response_body = null, response_headers = null,
            body_dropped_at = coalesce(cast(? as timestamptz), statement_timestamp())
        from batch
        where r.ctid = batch.ctid
        returning batch.expires_at)
      select count(*) as dropped, max(expires_at) as last_expires_at,
          coalesce(cast(? as timestamptz), statement_timestamp()) - ? * interval '1 millisecond'
              as bound
      from dropped
      """;

  /**
   * Where the walk of {@link #DROP_BODIES} goes on: the {@code expires_at} of the last row the
   * run's previous batch dropped, or the time bound of a batch that reached the end.
   */
  private record BodyWalkPosition(OffsetDateTime expiresAt) {}

  /**
   * One batch of deleting records whose body is dropped and whose metadata retention (counted from
   * expiry) has passed, with their history, in one statement. Walks {@code
   * idemkit_record_metadata_cleanup_ix} in its own order, like {@link #DROP_BODIES}.
   */
  private static final String DELETE_METADATA =
      """
      with batch as (
        select ctid from idemkit_record
        where body_dropped_at is not null
          and expires_at <= coalesce(cast(? as timestamptz), statement_timestamp())
                            - ? * interval '1 millisecond'
          and state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
        order by expires_at
        limit ?
        for update skip locked),
      deleted as (
        delete from idemkit_record r using batch
        where r.ctid = batch.ctid
        returning r.tenant, r.operation, r.idem_key),
      history as (
        delete from idemkit_record_history h using deleted d
        where h.tenant = d.tenant and h.operation = d.operation and h.idem_key = d.idem_key)
      select count(*) from deleted
      """;

  /**
   * One batch of deleting the history of earlier operations of reused keys: a key reused after its
   * window keeps the previous operation's history under the same key, ending with a {@code
   * REPLACED_EXPIRED} row ({@link PostgresIdempotencyStore#REPLACE_EXPIRED_KEEPING_HISTORY}), and
   * its record lives on, so {@link #DELETE_METADATA} never reaches those rows. They go once the
   * replacement is older than the metadata retention (the replacement came at or after the earlier
   * operation's expiry, so its metadata is kept at least as long as a record's). Walks {@code
   * idemkit_record_history_replaced_ix} in its own order; the history of the current operation,
   * written after its replacement row, has higher ids and stays.
   *
   * <p>Two instances meet here: {@code skip locked} hands each other replacement rows and other
   * rows to delete, so neither waits for the other (a key replaced twice has rows both walks
   * reach); a row one of them skipped is deleted by the one that holds it.
   */
  private static final String DELETE_REPLACED_HISTORY =
      """
      with batch as (
        select id, tenant, operation, idem_key from idemkit_record_history
        where event = 'REPLACED_EXPIRED'
          and at <= coalesce(cast(? as timestamptz), statement_timestamp())
                    - ? * interval '1 millisecond'
        order by at
        limit ?
        for update skip locked),
      doomed as (
        select h.id from idemkit_record_history h, batch b
        where h.tenant = b.tenant and h.operation = b.operation and h.idem_key = b.idem_key
          and h.id <= b.id
        for update of h skip locked)
      delete from idemkit_record_history h using doomed d
      where h.id = d.id
      """;

  /**
   * The instances' counts of new keys (V17, {@link PostgresQuotaSync}) of minutes that ended over
   * an hour ago: only the current minute's are read.
   */
  private static final String DELETE_OLD_KEY_COUNTERS =
      """
      with clock as (select coalesce(cast(? as timestamptz), statement_timestamp()) as now)
      delete from idemkit_quota_new_keys q using clock
      where q.minute < clock.now - interval '1 hour'
      """;

  private final JdbcTransactions transactions;
  private final Clock clock;

  /** Where the body walk goes on; null: from the start. */
  private BodyWalkPosition bodyWalk;

  PostgresCleanupRun(JdbcTransactions transactions, Clock clock) {
    this.transactions = transactions;
    this.clock = clock;
  }

  /** One batch of this run, going on from its position and moving it. */
  @Override
  public CleanupResult batch(Duration bodyRetention, Duration metadataRetention, int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
    }
    if (bodyRetention.isNegative() || metadataRetention.isNegative()) {
      throw new IllegalArgumentException("retentions cannot be negative");
    }
    return PostgresIdempotencyStore.call(
        () ->
            transactions.withConnection(
                c -> {
                  String now = clock == null ? null : clock.instant().toString();
                  int dropped;
                  BodyWalkPosition from = bodyWalk;
                  BodyWalkPosition last;
                  try (PreparedStatement ps = c.prepareStatement(DROP_BODIES)) {
                    ps.setString(1, now);
                    ps.setLong(2, bodyRetention.toMillis());
                    ps.setObject(3, from == null ? null : from.expiresAt());
                    ps.setInt(4, batchSize);
                    ps.setString(5, now);
                    ps.setString(6, now);
                    ps.setLong(7, bodyRetention.toMillis());
                    try (ResultSet rs = ps.executeQuery()) {
                      rs.next();
                      dropped = rs.getInt("dropped");
                      last =
                          new BodyWalkPosition(
                              rs.getObject(
                                  dropped == batchSize ? "last_expires_at" : "bound",
                                  OffsetDateTime.class));
                    }
                  }
                  // A full batch: the run goes on after its last row. A short one reached the
                  // end: the run's further batches go on from its bound, and the next run starts
                  // over, finding what became droppable behind the position meanwhile (a record
                  // suspended to FAILED_RETRYABLE keeps its expires_at).
                  bodyWalk = last;
                  long deleted;
                  try (PreparedStatement ps = c.prepareStatement(DELETE_METADATA)) {
                    ps.setString(1, now);
                    ps.setLong(2, metadataRetention.toMillis());
                    ps.setInt(3, batchSize);
                    try (ResultSet rs = ps.executeQuery()) {
                      rs.next();
                      deleted = rs.getLong(1);
                    }
                  }
                  try (PreparedStatement ps = c.prepareStatement(DELETE_REPLACED_HISTORY)) {
                    ps.setString(1, now);
                    ps.setLong(2, metadataRetention.toMillis());
                    ps.setInt(3, batchSize);
                    ps.executeUpdate();
                  }
                  try (PreparedStatement ps = c.prepareStatement(DELETE_OLD_KEY_COUNTERS)) {
                    ps.setString(1, now);
                    ps.executeUpdate();
                  }
                  return new CleanupResult(dropped, deleted, 2);
                }));
  }
}
