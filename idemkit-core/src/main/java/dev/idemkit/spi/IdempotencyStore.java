package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where records live: what every store must do. A store makes the decisive writes atomic; the
 * engine decides which to make.
 *
 * <p>Capabilities: what only some stores do is not here but in interfaces of its own, which a store
 * implements beside this one, or serves through {@link #capability(Class)}:
 *
 * <ul>
 *   <li>{@link RecoveryAdministration}: spacing out recovery attempts, escalating to an operator,
 *       the operator's lists and verdicts. Needed by a recovery schedule ({@link
 *       dev.idemkit.IdempotencyConfig#recoverySchedule()}) and by a recovery worker that spaces out
 *       its attempts.
 *   <li>{@link RecordCleanup}: dropping what finished records no longer need, in runs ({@link
 *       CleanupRun}) of small batches. Needed by a cleanup worker.
 *   <li>{@link QuotaSync}: sharing the instances' quota counts. Needed by quotas ({@link
 *       dev.idemkit.IdempotencyConfig#quotas()}).
 * </ul>
 *
 * Whoever needs a capability looks it up once, when it is made ({@link StoreCapabilities#require}):
 * {@link dev.idemkit.Idempotency#create} refuses a store that lacks one its configuration needs,
 * with a message naming the interface. A wrapper passes the lookup on to its delegate ({@link
 * ForwardingIdempotencyStore#capability}), so it never claims what the store underneath cannot do.
 * Tenant data keys are not a store capability: {@link DataKeyStore} is given to {@link
 * dev.idemkit.DataProtection} on its own.
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
   * Creates {@code record} as {@code IN_PROGRESS} with a lease of {@code lease} if its key has no
   * record, in one atomic write (an insert that does nothing on conflict). Exactly one of any
   * number of concurrent callers gets {@link ClaimAttempt.Inserted}.
   */
  ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease);

  /** Reads a record, with the store's current time. */
  Optional<Snapshot> read(StoreTransaction tx, ScopedKey id);

  /**
   * Takes over an existing record in one conditional write: applied only if the record still has
   * the fencing token and state of {@code seen} and the condition of {@code kind} still holds at
   * the store's time. The fencing token is bumped. {@link Takeover#REPLACE_EXPIRED} resets the
   * record for a new operation: {@code record} (of {@code seen}'s key) with its fingerprint and
   * window; the others keep the recovery point and data, and the record's own fingerprint and
   * window.
   *
   * @return the record as it is after the takeover (new token and lease, the recovery point as it
   *     really is), or empty if someone else changed the record first
   */
  Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, NewRecord record, Duration lease);

  /**
   * Extends the lease and locks the record for the rest of {@code tx}, proving ownership before a
   * phase writes anything. A renewed record is one recovery workers look after ({@link
   * #findNeedingRecovery(int)}) should its lease run out.
   */
  Ownership renew(StoreTransaction tx, Ownership owner, Duration lease);

  /**
   * Moves the recovery point to {@code checkpoint}: its phase is durable with its data, and its
   * pending call may be under way. An advanced record is one recovery workers look after ({@link
   * #findNeedingRecovery(int)}) once its lease runs out.
   */
  void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint);

  /**
   * Ends the operation with {@code answer}. The record's window restarts here: its expiry becomes
   * at least now plus the window it was claimed with (a store may keep the claim's expiry when that
   * is at most a second earlier), so an outcome that arrives late (recovered after the window
   * passed) is still replayed for a whole window, and no retry can find it expired and run the
   * operation again.
   */
  void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer);

  /**
   * Inserts {@code record}, of a single-transaction operation that has just run in {@code tx},
   * already finished with {@code answer}: the record is written once, as the transaction's last
   * write, after the business writes (contract §5). It is made as {@link #finish} leaves a record:
   * fencing token 1, lease ended, created and completed now, expiring its {@code ttl} from now.
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
  void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer);

  /**
   * Inserts {@code record}, of a phased operation whose local phases up to a call's marker have
   * just run in {@code tx}: {@code IN_PROGRESS}, owned by the caller with fencing token 1 and a
   * lease of {@code lease} from now, at {@code checkpoint} (its call named as possibly under way);
   * expiring its {@code ttl} from now. It is the record {@link #claim} then {@link #advance} leave,
   * written once, as the transaction's last write, after the business writes (contract §5), and
   * recovery workers look after it ({@link #findNeedingRecovery(int)}) once its lease runs out.
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
      StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
    if (!(claim(tx, record, lease) instanceof ClaimAttempt.Inserted inserted)) {
      throw new RecordExistsException(record.id());
    }
    Ownership owner = Ownership.of(inserted.record());
    advance(tx, owner, checkpoint);
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
   * This store's implementation of the capability {@code type}, if it has it: one of {@link
   * RecoveryAdministration}, {@link RecordCleanup} and {@link QuotaSync}, the optional interfaces
   * of this package (see the class comment). The engine and the workers look each one up once, when
   * they are made, and a configuration that needs one the store lacks is refused then ({@link
   * StoreCapabilities#require}), never in the middle of a request.
   *
   * <p>The default answers this store itself when it implements {@code type}. A store that serves a
   * capability with another object (the PostgreSQL store's quota sync) overrides this; a wrapper
   * ({@link ForwardingIdempotencyStore}) answers what its delegate answers, wrapped where the
   * wrapper changes those calls, and never a capability its delegate lacks.
   */
  default <T> Optional<T> capability(Class<T> type) {
    return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
  }
}
