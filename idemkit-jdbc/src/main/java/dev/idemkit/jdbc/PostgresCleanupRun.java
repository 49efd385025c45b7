package dev.idemkit.jdbc;

import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * A cleanup run of {@link PostgresIdempotencyStore}, with its statements: which table (or
 * partition) each walk is in and where the body walk goes on in each ({@link #DROP_BODIES}). Its
 * batches follow each other on one thread. Runs of other threads and instances have positions of
 * their own, and {@code skip locked} keeps their batches apart.
 */
final class PostgresCleanupRun implements CleanupRun {

  /**
   * One batch of dropping expired bodies, in one table: {@code %1$s} is the plain record table or
   * one partition of a hash-partitioned one ({@link #WALKED_TABLES}), named whole, so that the
   * {@code ctid} the walk hands the update is that table's (a {@code ctid} is an address within one
   * table: the same one names a row in every partition). The walk reads {@code
   * idemkit_record_body_cleanup_ix} (or the partition's part of it) in its own order ({@code
   * expires_at}, only rows whose body is still there) and stops after {@code limit} rows: the time
   * bound is a value fixed for the statement, not a join, so a batch costs what it drops however
   * large the backlog. Every expired row is marked, body or not, so the walk never passes it again.
   * The walk hands the update the rows' physical addresses ({@code ctid}), which stay put while the
   * walk's {@code for update} lock holds them: each row is reached again directly, not by a second
   * lookup in the primary key.
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
        select ctid, expires_at from %1$s
        where body_dropped_at is null
          and expires_at <= coalesce(cast(? as timestamptz), statement_timestamp())
                            - ? * interval '1 millisecond'
          and expires_at >= coalesce(cast(? as timestamptz), '-infinity')
          and state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
        order by expires_at
        limit ?
        for update skip locked),
      dropped as (
        update %1$s r
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
   * expiry) has passed, with their history, in one statement, in one table ({@code %1$s}, as in
   * {@link #DROP_BODIES}). Walks {@code idemkit_record_metadata_cleanup_ix} in its own order, like
   * {@link #DROP_BODIES}.
   */
  private static final String DELETE_METADATA =
      """
      with batch as (
        select ctid from %1$s
        where body_dropped_at is not null
          and expires_at <= coalesce(cast(? as timestamptz), statement_timestamp())
                            - ? * interval '1 millisecond'
          and state not in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')
        order by expires_at
        limit ?
        for update skip locked),
      deleted as (
        delete from %1$s r using batch
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

  /**
   * The tables the walks go through: the partitions of a hash-partitioned record table ({@link
   * RecordLayout}) in their order, or the plain table alone. Names as the catalog spells them
   * ({@code regclass}, quoted where needed), so they go into {@link #DROP_BODIES} and {@link
   * #DELETE_METADATA} as they are.
   */
  private static final String WALKED_TABLES =
      """
      select coalesce(
          (select array_agg(i.inhrelid::regclass::text order by i.inhrelid::regclass::text)
           from pg_inherits i where i.inhparent = 'idemkit_record'::regclass),
          array['idemkit_record'])
      """;

  private final JdbcTransactions transactions;
  private final Clock clock;

  /** The walks' tables and their statements, read at the run's first batch. */
  private List<Walked> tables;

  /** The table each walk is in: an index into {@link #tables}. */
  private int bodyTable;

  private int metadataTable;

  PostgresCleanupRun(JdbcTransactions transactions, Clock clock) {
    this.transactions = transactions;
    this.clock = clock;
  }

  /**
   * One table of the walks, with its statements and where the body walk goes on in it (null: from
   * the start).
   */
  private static final class Walked {
    final String dropBodies;
    final String deleteMetadata;
    BodyWalkPosition bodyWalk;

    Walked(String table) {
      this.dropBodies = DROP_BODIES.formatted(table);
      this.deleteMetadata = DELETE_METADATA.formatted(table);
    }
  }

  /**
   * One batch of this run, going on from its positions and moving them. Each walk takes up to
   * {@code batchSize} rows from the table it is in, one statement (one short transaction) per
   * table: a table that comes up short has nothing more for this run, and the walk goes on in the
   * next one (after the last, the first again, from its position), visiting each table at most once
   * per batch. A hash-partitioned table is so cleaned one partition after the other: each
   * partition's dead rows come together, its autovacuum (which works per partition) runs while the
   * walk is in the next ones, and a statement reads one partition's index, not all of them. On the
   * plain table this is one statement per walk, as before.
   */
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
                  if (tables == null) {
                    tables = walkedTables(c);
                  }
                  String now = clock == null ? null : clock.instant().toString();
                  int statements = 0;
                  int dropped = 0;
                  for (int visited = 0;
                      visited < tables.size() && dropped < batchSize;
                      visited++, statements++) {
                    int asked = batchSize - dropped;
                    int got = dropBodies(c, tables.get(bodyTable), now, bodyRetention, asked);
                    dropped += got;
                    if (got < asked) {
                      bodyTable = (bodyTable + 1) % tables.size();
                    }
                  }
                  long deleted = 0;
                  for (int visited = 0;
                      visited < tables.size() && deleted < batchSize;
                      visited++, statements++) {
                    int asked = (int) (batchSize - deleted);
                    long got =
                        deleteMetadata(c, tables.get(metadataTable), now, metadataRetention, asked);
                    deleted += got;
                    if (got < asked) {
                      metadataTable = (metadataTable + 1) % tables.size();
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
                  return new CleanupResult(dropped, deleted, statements);
                }));
  }

  private static List<Walked> walkedTables(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(WALKED_TABLES)) {
      rs.next();
      List<Walked> walked = new ArrayList<>();
      for (String table : (String[]) rs.getArray(1).getArray()) {
        walked.add(new Walked(table));
      }
      return List.copyOf(walked);
    }
  }

  /** Drops up to {@code limit} bodies in {@code table}, from its position; moves the position. */
  private static int dropBodies(
      Connection c, Walked table, String now, Duration bodyRetention, int limit)
      throws SQLException {
    BodyWalkPosition from = table.bodyWalk;
    try (PreparedStatement ps = c.prepareStatement(table.dropBodies)) {
      ps.setString(1, now);
      ps.setLong(2, bodyRetention.toMillis());
      ps.setObject(3, from == null ? null : from.expiresAt());
      ps.setInt(4, limit);
      ps.setString(5, now);
      ps.setString(6, now);
      ps.setLong(7, bodyRetention.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        int dropped = rs.getInt("dropped");
        // A full batch: the walk goes on after its last row. A short one reached the end: the
        // run's further batches go on from its bound, and the next run starts over, finding what
        // became droppable behind the position meanwhile (a record suspended to FAILED_RETRYABLE
        // keeps its expires_at).
        table.bodyWalk =
            new BodyWalkPosition(
                rs.getObject(dropped == limit ? "last_expires_at" : "bound", OffsetDateTime.class));
        return dropped;
      }
    }
  }

  /** Deletes up to {@code limit} records of {@code table} past their metadata retention. */
  private static long deleteMetadata(
      Connection c, Walked table, String now, Duration metadataRetention, int limit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(table.deleteMetadata)) {
      ps.setString(1, now);
      ps.setLong(2, metadataRetention.toMillis());
      ps.setInt(3, limit);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
