package dev.idemkit.spi;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.time.Duration;
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

  /** Moves the recovery point: the phase {@code recoveryPoint} is durable with {@code data}. */
  void advance(
      StoreTransaction tx,
      Ownership owner,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data);

  /**
   * Ends the operation: {@code COMPLETED} or {@code FAILED_REPLAYABLE} with its response. The
   * record's window restarts here: its expiry becomes at least now plus the window it was claimed
   * with, so an outcome that arrives late (recovered after the window passed) is still replayed for
   * a whole window, and no retry can find it expired and run the operation again.
   */
  void finish(StoreTransaction tx, Ownership owner, RecordState state, StoredResponse response);

  /**
   * Stops owning without finishing: {@code FAILED_RETRYABLE}, {@code UNKNOWN_REQUIRES_RECOVERY}
   * (counting a recovery attempt), or {@code IN_PROGRESS} with the lease released so that the next
   * retry resumes at once.
   */
  void suspend(StoreTransaction tx, Ownership owner, RecordState state);

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
   * {@code metadataRetention} past that. Never touches a live record.
   */
  CleanupResult cleanup(Duration metadataRetention, int batchSize);
}
