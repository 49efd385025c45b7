package dev.idemkit.jdbc;

import static dev.idemkit.jdbc.PostgresIdempotencyStore.ADVANCE;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.ADVANCE_AND_COMMIT;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.FINISH;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.FINISH_AND_COMMIT;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.FINISH_FRESH;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.FINISH_FRESH_AND_COMMIT;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.INSERT_FINISHED;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.INSERT_FINISHED_AND_COMMIT;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.INSERT_IN_PROGRESS;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.INSERT_IN_PROGRESS_AND_COMMIT;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.NOT_OWNED;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.RECORD_KEY;
import static dev.idemkit.jdbc.PostgresIdempotencyStore.UNIQUE_VIOLATION;
import static dev.idemkit.jdbc.RecordRows.bindKey;
import static dev.idemkit.jdbc.RecordRows.bindOwner;

import dev.idemkit.LostOwnershipException;
import dev.idemkit.StoredResponse;
import dev.idemkit.internal.Json;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.RecordExistsException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import org.postgresql.util.PSQLException;

/**
 * A transaction's last write to its record, held back to be sent with the commit: a completion
 * ({@link Completion}), a call's marker ({@link FencedAdvance}), a local operation's finished
 * record ({@link FinishedInsert}) or a phased operation's record at its first call ({@link
 * InProgressInsert}). Each names its statement alone and with the commit.
 */
sealed interface HeldWrite
    permits HeldWrite.Completion, HeldWrite.FencedAdvance, HeldWrite.RecordInsert {

  NamedSql alone();

  NamedSql withCommit();

  /** Binds the write's parameters. */
  void bind(NamedSql.Parameters p) throws SQLException;

  /** Fails unless the write's own statement wrote one row. */
  void requireOne(int written);

  /** What a failure of the round trip that carried the write means: {@code e}, or thrown. */
  SQLException refusalOr(SQLException e);

  default void send(Connection c, NamedSql sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
      bind(sql.bind(ps));
      ps.execute();
      requireOne(ps.getUpdateCount());
    } catch (SQLException e) {
      throw refusalOr(e);
    }
  }

  /**
   * An insert of a key's record, held back to be sent with the commit. Its failure on the record's
   * primary key is {@link RecordExistsException}: the key has a record, and nothing of this
   * transaction is kept.
   */
  sealed interface RecordInsert extends HeldWrite permits FinishedInsert, InProgressInsert {

    /** The record inserted. */
    NewRecord record();

    /** Nothing to count: an insert of the one row its statement selects writes it or raises. */
    @Override
    default void requireOne(int written) {}

    /**
     * Only a violation of the record's own key is the key taken; a unique violation of another
     * constraint (a deferred business constraint the commit checks) stays the failure it is.
     */
    @Override
    default SQLException refusalOr(SQLException e) {
      for (SQLException s = e; s != null; s = s.getNextException()) {
        if (UNIQUE_VIOLATION.equals(s.getSQLState())
            && s instanceof PSQLException p
            && p.getServerErrorMessage() != null
            && p.getServerErrorMessage().getConstraint() != null
            && RECORD_KEY.matcher(p.getServerErrorMessage().getConstraint()).matches()) {
          throw new RecordExistsException(record().id());
        }
      }
      return e;
    }
  }

  /** A local operation's finished record ({@link PostgresIdempotencyStore#INSERT_FINISHED}). */
  record FinishedInsert(NewRecord record, FinalAnswer answer, String now) implements RecordInsert {

    @Override
    public NamedSql alone() {
      return INSERT_FINISHED;
    }

    @Override
    public NamedSql withCommit() {
      return INSERT_FINISHED_AND_COMMIT;
    }

    @Override
    public void bind(NamedSql.Parameters p) throws SQLException {
      bindAnswer(bindNew(p.set("now", now), record), answer);
    }

    @Override
    public String toString() {
      return record.id().toString();
    }
  }

  /**
   * A phased operation's record at its first call's marker ({@link
   * PostgresIdempotencyStore#INSERT_IN_PROGRESS}).
   */
  record InProgressInsert(NewRecord record, Duration lease, Checkpoint checkpoint, String now)
      implements RecordInsert {

    @Override
    public NamedSql alone() {
      return INSERT_IN_PROGRESS;
    }

    @Override
    public NamedSql withCommit() {
      return INSERT_IN_PROGRESS_AND_COMMIT;
    }

    @Override
    public void bind(NamedSql.Parameters p) throws SQLException {
      bindCheckpoint(bindNew(p.set("now", now), record), checkpoint)
          .set("lease_ms", lease.toMillis());
    }

    @Override
    public String toString() {
      return record.id().toString();
    }
  }

  /**
   * A completion, held back to be sent with the commit. Of a record claimed afresh in this
   * transaction ({@code fenced} false, {@link PostgresIdempotencyStore#FINISH_FRESH}) it cannot
   * lose its record: nobody else sees a record whose insert has not committed (other claims wait on
   * its key, takeovers cannot find it), so its update matches exactly one row whenever it is sent.
   * Of a record claimed in an earlier transaction (a phased operation's, a takeover's run: {@code
   * fenced}, {@link PostgresIdempotencyStore#FINISH}) it can meet a record another owner took over
   * meanwhile; its statement then fails with {@value PostgresIdempotencyStore#NOT_OWNED} before the
   * commit sent with it runs, and that is {@link LostOwnershipException}.
   */
  record Completion(boolean fenced, FinalAnswer answer, Ownership owner, String now)
      implements HeldWrite {

    @Override
    public NamedSql alone() {
      return fenced ? FINISH : FINISH_FRESH;
    }

    @Override
    public NamedSql withCommit() {
      return fenced ? FINISH_AND_COMMIT : FINISH_FRESH_AND_COMMIT;
    }

    @Override
    public SQLException refusalOr(SQLException e) {
      return fenced ? lostOwnershipOr(e, owner) : e;
    }

    @Override
    public void bind(NamedSql.Parameters p) throws SQLException {
      bindAnswer(bindOwner(p.set("now", now), owner), answer);
    }

    /** A fenced completion's statement itself failed unless it updated the one row. */
    @Override
    public void requireOne(int updated) {
      if (!fenced && updated != 1) {
        throw new IllegalStateException(
            "The completion of " + owner.id() + ", claimed in its own transaction, found no row");
      }
    }

    @Override
    public String toString() {
      return owner.id().toString();
    }
  }

  /**
   * A recovery point and a call's marker ({@link PostgresIdempotencyStore#ADVANCE}), held back to
   * be sent with the commit: a marker is the last write of its transaction (the call is made after
   * the commit). Its statement fails with {@value PostgresIdempotencyStore#NOT_OWNED} when another
   * owner took the record over, before the commit sent with it runs: {@link
   * LostOwnershipException}, and nothing of the transaction kept.
   */
  record FencedAdvance(Checkpoint checkpoint, Ownership owner, String now) implements HeldWrite {

    @Override
    public NamedSql alone() {
      return ADVANCE;
    }

    @Override
    public NamedSql withCommit() {
      return ADVANCE_AND_COMMIT;
    }

    @Override
    public SQLException refusalOr(SQLException e) {
      return lostOwnershipOr(e, owner);
    }

    @Override
    public void bind(NamedSql.Parameters p) throws SQLException {
      bindCheckpoint(bindOwner(p.set("now", now), owner), checkpoint);
    }

    /** Nothing to count: the statement itself failed unless it updated the one row. */
    @Override
    public void requireOne(int ignored) {}

    @Override
    public String toString() {
      return owner.id().toString();
    }
  }

  /** Binds what every insert of a record writes: its key, fingerprint and window. */
  private static NamedSql.Parameters bindNew(NamedSql.Parameters p, NewRecord record)
      throws SQLException {
    return bindKey(p, record.id())
        .set("fingerprint", record.fingerprint().toString())
        .set("ttl_ms", record.ttl().toMillis());
  }

  /** Binds the final state and response of a completion or a finished insert. */
  private static NamedSql.Parameters bindAnswer(NamedSql.Parameters p, FinalAnswer answer)
      throws SQLException {
    StoredResponse response = answer.response();
    return p.set("state", answer.state().name())
        .set("status", response.status())
        .set("headers", Json.write(response.headers()))
        .set("body", response.body())
        .set("schema_version", response.schemaVersion())
        .set("resource_id", response.resourceId());
  }

  /** Binds the recovery point, pending call and data of an advance or an in-progress insert. */
  private static NamedSql.Parameters bindCheckpoint(NamedSql.Parameters p, Checkpoint checkpoint)
      throws SQLException {
    return p.set("recovery_point", checkpoint.recoveryPoint())
        .set("pending_external", checkpoint.pendingExternal())
        .set("recovery_data", checkpoint.data().isEmpty() ? null : Json.write(checkpoint.data()));
  }

  /**
   * A fenced write's failure: {@link LostOwnershipException} when its statement found the record
   * owned by someone else ({@value PostgresIdempotencyStore#NOT_OWNED}), else {@code e}.
   */
  static SQLException lostOwnershipOr(SQLException e, Ownership owner) {
    for (SQLException s = e; s != null; s = s.getNextException()) {
      if (NOT_OWNED.equals(s.getSQLState())) {
        throw new LostOwnershipException(owner.id(), owner.fencingToken());
      }
    }
    return e;
  }
}
