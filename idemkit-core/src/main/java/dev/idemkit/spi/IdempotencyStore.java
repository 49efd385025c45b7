package dev.idemkit.spi;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Where records live. A store makes the decisive writes atomic; the engine decides which to make.
 *
 * <p>Time: every lease and expiry comparison uses the store's single clock (the database's time for
 * a database store), never the caller's JVM clock, so instances with skewed clocks agree.
 *
 * <p>Every owner write ({@code renew}, {@code advance}, {@code finish}, {@code suspend}) applies
 * only while the owner's fencing token is current and throws {@link LostOwnershipException}
 * otherwise; the caller's transaction must then be rolled back.
 */
public interface IdempotencyStore {

  /**
   * Runs {@code work} in one transaction: committed if it returns, rolled back if it throws (the
   * exception propagates unchanged).
   */
  <T> T inTransaction(TransactionWork<T> work) throws Exception;

  /**
   * Creates the record as {@code IN_PROGRESS} with a lease if none exists, in one atomic write (an
   * insert that does nothing on conflict). Exactly one of any number of concurrent callers gets
   * {@link ClaimAttempt.Inserted}.
   */
  ClaimAttempt claim(
      StoreTransaction tx, ScopedKey id, Fingerprint fingerprint, Duration lease, Duration ttl);

  /** Reads a record, with the store's current time. */
  Optional<Snapshot> read(StoreTransaction tx, ScopedKey id);

  /**
   * Takes over an existing record in one conditional write: applied only if the record still has
   * the fencing token and state of {@code seen} and the condition of {@code kind} still holds at
   * the store's time. The fencing token is bumped. {@link Takeover#REPLACE_EXPIRED} resets the
   * record for a new operation with {@code fingerprint} and {@code ttl}; the others keep the
   * recovery point and data.
   *
   * @return the record as it is after the takeover (new token and lease, the recovery point as it
   *     really is), or empty if someone else changed the record first
   */
  Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx,
      Snapshot seen,
      Takeover kind,
      Fingerprint fingerprint,
      Duration lease,
      Duration ttl);

  /**
   * Extends the lease and locks the record for the rest of {@code tx}, proving ownership before a
   * phase writes anything. A renewed record is one recovery workers look after ({@link
   * #findNeedingRecovery(int)}) should its lease run out.
   */
  Ownership renew(StoreTransaction tx, Ownership owner, Duration lease);

  /**
   * Moves the recovery point: the phase {@code recoveryPoint} is durable with {@code data}, and
   * {@code pendingExternal} names the call that may be under way (or null). An advanced record is
   * one recovery workers look after ({@link #findNeedingRecovery(int)}) once its lease runs out.
   */
  void advance(
      StoreTransaction tx,
      Ownership owner,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data);

  /**
   * Ends the operation: {@code COMPLETED} or {@code FAILED_REPLAYABLE} with its response. The
   * record's window restarts here: its expiry becomes at least now plus the window it was claimed
   * with (a store may keep the claim's expiry when that is at most a second earlier), so an outcome
   * that arrives late (recovered after the window passed) is still replayed for a whole window, and
   * no retry can find it expired and run the operation again.
   */
  void finish(StoreTransaction tx, Ownership owner, RecordState state, StoredResponse response);

  /**
   * Inserts the record of a single-transaction operation that has just run in {@code tx}, already
   * finished ({@code COMPLETED} or {@code FAILED_REPLAYABLE}) with {@code response}: the record is
   * written once, as the transaction's last write, after the business writes (contract §5). It is
   * made as {@link #finish} leaves a record: fencing token 1, lease ended, created and completed
   * now, expiring {@code ttl} from now.
   *
   * <p>The insert is plain, never one that does nothing on conflict: when the key has a record it
   * waits for that record's transaction, if it is still open, then fails with {@link
   * RecordExistsException}, and {@code tx} must roll back with every business write in it. A store
   * may hold the insert back and send it with the commit (then it throws from {@link
   * #inTransaction}, with nothing committed: the commit never runs after the failed insert).
   *
   * <p>Two requests meet here: of concurrent inserts of one key exactly one commits; each other
   * waits on the first's uncommitted row, then fails, or inserts if the first rolled back.
   */
  void insertFinished(
      StoreTransaction tx,
      ScopedKey id,
      Fingerprint fingerprint,
      RecordState state,
      StoredResponse response,
      Duration ttl);

  /**
   * Inserts the record of a phased operation whose local phases up to a call's marker have just run
   * in {@code tx}: {@code IN_PROGRESS}, owned by the caller with fencing token 1 and a lease of
   * {@code lease} from now, at {@code recoveryPoint} (null: before any phase) with the call {@code
   * pendingExternal} named as possibly under way and {@code data} stored; expiring {@code ttl} from
   * now. It is the record {@link #claim} then {@link #advance} leave, written once, as the
   * transaction's last write, after the business writes (contract §5), and recovery workers look
   * after it ({@link #findNeedingRecovery(int)}) once its lease runs out.
   *
   * <p>The insert is plain, as {@link #insertFinished}'s: when the key has a record it waits for
   * that record's transaction, if it is still open, then fails with {@link RecordExistsException},
   * and {@code tx} must roll back with every business write in it; a store may hold the insert back
   * and send it with the commit. Of concurrent inserts of one key exactly one commits, so exactly
   * one caller makes the call.
   *
   * <p>This default claims and advances in two writes; a store should insert the record as it is in
   * one.
   *
   * @return the caller's ownership of the record, valid once {@code tx} commits; its {@link
   *     Ownership#lockedUntil()} is the lease's end as this JVM estimates it
   */
  default Ownership insertInProgress(
      StoreTransaction tx,
      ScopedKey id,
      Fingerprint fingerprint,
      Duration lease,
      Duration ttl,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data) {
    ClaimAttempt attempt = claim(tx, id, fingerprint, lease, ttl);
    if (!(attempt instanceof ClaimAttempt.Inserted inserted)) {
      throw new RecordExistsException(id);
    }
    Ownership owner = Ownership.of(inserted.record());
    advance(tx, owner, recoveryPoint, pendingExternal, data);
    return owner;
  }

  /**
   * Stops owning without finishing: {@code FAILED_RETRYABLE}, {@code UNKNOWN_REQUIRES_RECOVERY}
   * (counting a recovery attempt), or {@code IN_PROGRESS} with the lease released so that the next
   * retry resumes at once.
   */
  void suspend(StoreTransaction tx, Ownership owner, RecordState state);

  /**
   * Reads a record and the store's current time outside any caller transaction, in as few round
   * trips as the store can (one, for a database store: an auto-commit read). The engine uses it to
   * answer a retry of a finished operation without opening a transaction.
   */
  default Optional<Snapshot> peek(ScopedKey id) {
    try {
      return inTransaction(tx -> read(tx, id));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not read the record of " + id, e);
    }
  }

  /** Reads a record outside any caller transaction. */
  Optional<IdempotencyRecord> find(ScopedKey id);

  /**
   * Records that need recovery at the store's time, among those an owner renewed (phased
   * operations; a single-transaction operation never commits a live record): {@code
   * UNKNOWN_REQUIRES_RECOVERY} or {@code IN_PROGRESS} whose lease ran out, oldest lease first.
   */
  List<IdempotencyRecord> findNeedingRecovery(int limit);

  /**
   * Same as {@link #findNeedingRecovery(int)}, only records of {@code operations}: the ones a
   * recovery worker can resume. Records of other operations must not fill its batches, or they
   * would stand at the head of every scan and starve the rest.
   *
   * <p>This default reads ever larger batches and filters them; a store should filter in its query.
   */
  default List<IdempotencyRecord> findNeedingRecovery(int limit, Set<String> operations) {
    if (operations.isEmpty()) {
      return List.of();
    }
    for (int n = limit; ; n = n > Integer.MAX_VALUE / 2 ? Integer.MAX_VALUE : n * 2) {
      List<IdempotencyRecord> due = findNeedingRecovery(n);
      List<IdempotencyRecord> wanted =
          due.stream().filter(r -> operations.contains(r.id().operation())).limit(limit).toList();
      if (wanted.size() == limit || due.size() < n || n == Integer.MAX_VALUE) {
        return wanted;
      }
    }
  }

  /**
   * Cleans up in small batches, each its own short transaction: drops the response body of expired
   * records (keeping scope, fingerprint, resource id and times), then deletes records at least
   * {@code metadataRetention} past their expiry. Never touches a live record. The same as {@link
   * #cleanup(Duration, Duration, int)} with no body retention.
   */
  CleanupResult cleanup(Duration metadataRetention, int batchSize);

  /**
   * Runs cleanup until nothing is left: batches of {@link #cleanupBatch} until a batch finds less
   * than {@code batchSize} rows of each kind. Unpaced; a scheduler that shares the database with
   * traffic calls {@link #cleanupBatch} itself and pauses between batches.
   */
  default CleanupResult cleanup(Duration bodyRetention, Duration metadataRetention, int batchSize) {
    beginCleanupRun();
    long dropped = 0;
    long deleted = 0;
    int batches = 0;
    CleanupResult batch;
    do {
      batch = cleanupBatch(bodyRetention, metadataRetention, batchSize);
      dropped += batch.bodiesDropped();
      deleted += batch.recordsDeleted();
      batches += batch.batches();
    } while (batch.bodiesDropped() == batchSize || batch.recordsDeleted() == batchSize);
    return new CleanupResult(dropped, deleted, batches);
  }

  /**
   * Says that a cleanup run begins: the calls of {@link #cleanupBatch} that follow, until the next
   * call of this, are its batches. A store may then go on from where a run's previous batch stopped
   * and start over only when a run begins (the PostgreSQL store does: live records past their
   * window, which are never cleaned up, are read once per run rather than once per batch). Without
   * it, a store may start over whenever a batch reaches the end. The default does nothing.
   */
  default void beginCleanupRun() {}

  /**
   * One batch of each cleanup walk, each its own short transaction that skips rows another holds:
   * drops the stored response of up to {@code batchSize} records expired at least {@code
   * bodyRetention} ago (their metadata stays), then deletes up to {@code batchSize} records whose
   * body is dropped and which expired at least {@code metadataRetention} ago, with their history,
   * and the history of earlier operations of keys reused after their window once the reuse is
   * {@code metadataRetention} old (the record lives on, so its history would not go with it). Never
   * touches a live record ({@code IN_PROGRESS}, {@code UNKNOWN_REQUIRES_RECOVERY}); any number of
   * instances may run it at once, and no row is dropped twice.
   */
  default CleanupResult cleanupBatch(
      Duration bodyRetention, Duration metadataRetention, int batchSize) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not support cleanup with a body retention");
  }

  /**
   * Spaces out recovery attempts of a record whose outcome stayed unknown. {@code n}, the attempts
   * made, counts the first request's ({@link #suspend} counts each attempt left unknown), so the
   * recovery worker's first attempt, made at once, brings it to 2: the next is due after {@code
   * firstDelay * 2^(n-2)} ({@code firstDelay} after the worker's first attempt, then twice as long
   * each time; {@code firstDelay} too when {@code n} is 1; at most {@code maxDelay}), and client
   * retries are told to wait as long. Once {@code n} reaches {@code maxAttempts} the record is
   * escalated: no further automatic recovery, it waits for an operator ({@link #resolve}).
   */
  default RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not support recovery backoff");
  }

  /**
   * When the oldest unfinished record was claimed: the earliest {@code createdAt} of the records in
   * progress (committed, whoever holds them) or awaiting recovery (an unknown outcome, in its
   * backoff or escalated to an operator); empty when there is none. What the gauge {@code
   * idempotency.in_progress.age.max} shows. The default asks {@link #findNeedingRecovery(int)}, so
   * it sees only records whose recovery is due now; a store should answer for all of them.
   */
  default Optional<Instant> oldestUnfinishedSince() {
    return findNeedingRecovery(1).stream().findFirst().map(IdempotencyRecord::createdAt);
  }

  /**
   * Records whose unknown outcome waits between two automatic recovery attempts ({@code
   * UNKNOWN_REQUIRES_RECOVERY}, not escalated, the next attempt not due yet), the soonest next
   * attempt first. Their {@link IdempotencyRecord#lockedUntil()} is when the next attempt is due
   * ({@link #backOffRecovery} sets both). Neither {@link #findNeedingRecovery(int)} (not due) nor
   * {@link #findEscalated(int)} (not escalated) lists them: an operator's list needs this too.
   */
  default List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not support recovery backoff");
  }

  /** Records waiting for an operator (escalated, outcome still unknown), oldest first. */
  default List<IdempotencyRecord> findEscalated(int limit) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not support escalation");
  }

  /**
   * An operator's verdict on a record whose outcome is unknown: stored in the record's data for the
   * external phase's lookup ({@link dev.idemkit.OperationContext#operatorResolution()}), the record
   * made due for recovery at once (attempts reset), and a history row written with {@code actor}
   * and {@code reason}. A record with no call pending (a local phase failed after an external
   * effect until it was escalated) takes a verdict too; it is only made due again.
   *
   * <p>A second resolution of the same record before recovery acted on the first ({@link
   * OperatorResolution#pendingIn}) is refused, whatever it says: it never merges into the first (an
   * {@code APPLIED} reference left beside a {@code NOT_APPLIED}, or replacing the first's). The
   * caller tells an identical repeat from a different verdict by reading the record.
   *
   * @return false when the record is not (or no longer) waiting on an unknown outcome, or already
   *     holds a resolution recovery has not acted on
   */
  default boolean resolve(
      ScopedKey id, OperatorResolution resolution, String actor, String reason) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not support operator resolution");
  }

  /**
   * How this store shares the instances' quota counts ({@link QuotaSync}), if it can: a background
   * worker calls it through {@link dev.idemkit.Idempotency#syncQuotas()} about once a second. Empty
   * by default: each instance then counts its own admissions only.
   */
  default Optional<QuotaSync> quotaSync() {
    return Optional.empty();
  }
}
