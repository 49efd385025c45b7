package dev.idemkit.testing;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordState;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.RecordCleanup;
import dev.idemkit.spi.RecordExistsException;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import dev.idemkit.spi.TransactionWork;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A store in memory, for tests and for trying the engine without a database. It passes the same
 * contract suite as the PostgreSQL store, every capability's included: it is its own {@link
 * RecoveryAdministration}, {@link RecordCleanup} and {@link QuotaSync}.
 *
 * <p>Concurrency: one lock serializes whole transactions, which is trivially as strong as the
 * database's row locks (and slower). A rolled-back transaction restores the records it found; code
 * under test registers its own undo with {@link Transaction#onRollback(Runnable)}.
 *
 * <p>Why one class over 600 lines: its capabilities are not separable rooms. Each of them reads and
 * writes the same records under the same lock, and that one lock is what makes every capability as
 * strong as the database's row locks; classes of their own would have to share the map and the lock
 * and take it in the same order.
 */
public final class InMemoryIdempotencyStore
    implements IdempotencyStore, RecoveryAdministration, RecordCleanup, QuotaSync {

  /** As the PostgreSQL store: a completion this close to the claim keeps the claim's expiry. */
  private static final Duration LATE_COMPLETION = Duration.ofSeconds(1);

  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<ScopedKey, IdempotencyRecord> records = new HashMap<>();

  /** Each instance's new keys per tenant and minute ({@link #exchange}). */
  private final Map<KeyCounter, Integer> newKeys = new HashMap<>();

  private record KeyCounter(Instant minute, String tenant, String instance) {}

  /** Records escalated to an operator: no automatic recovery until their next suspension. */
  private final Set<ScopedKey> escalated = new HashSet<>();

  public InMemoryIdempotencyStore(Clock clock) {
    this.clock = clock;
  }

  public InMemoryIdempotencyStore() {
    this(Clock.systemUTC());
  }

  /** The in-memory transaction handle; {@code unwrap(Transaction.class)} returns it. */
  public final class Transaction implements StoreTransaction {
    private final List<Runnable> undo = new ArrayList<>();

    /** Runs {@code action} if this transaction rolls back. */
    public void onRollback(Runnable action) {
      undo.add(action);
    }

    @Override
    public <T> T unwrap(Class<T> type) {
      if (type.isInstance(this)) {
        return type.cast(this);
      }
      throw new IllegalArgumentException("The in-memory store has no " + type.getName());
    }
  }

  @Override
  public <T> T inTransaction(TransactionWork<T> work) throws Exception {
    if (lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("Transactions do not nest");
    }
    lock.lock();
    try {
      Map<ScopedKey, IdempotencyRecord> before = new HashMap<>(records);
      Transaction tx = new Transaction();
      try {
        return work.run(tx);
      } catch (Exception | Error e) {
        records.clear();
        records.putAll(before);
        for (int i = tx.undo.size() - 1; i >= 0; i--) {
          tx.undo.get(i).run();
        }
        throw e;
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
    Instant now = clock.instant();
    IdempotencyRecord existing = records.get(record.id());
    if (existing != null) {
      return new ClaimAttempt.Found(new Snapshot(existing, now));
    }
    IdempotencyRecord created =
        new IdempotencyRecord(
            record.id(),
            record.fingerprint(),
            RecordState.IN_PROGRESS,
            1,
            now.plus(lease),
            null,
            null,
            Map.of(),
            0,
            null,
            now,
            now,
            now.plus(record.ttl()));
    records.put(record.id(), created);
    return new ClaimAttempt.Inserted(created);
  }

  @Override
  public Optional<Snapshot> read(StoreTransaction tx, ScopedKey id) {
    return Optional.ofNullable(records.get(id)).map(r -> new Snapshot(r, clock.instant()));
  }

  @Override
  public Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, NewRecord record, Duration lease) {
    Instant now = clock.instant();
    IdempotencyRecord r = records.get(seen.record().id());
    if (r == null
        || r.fencingToken() != seen.record().fencingToken()
        || r.state() != seen.record().state()) {
      return Optional.empty();
    }
    boolean applies =
        switch (kind) {
          case REPLACE_EXPIRED -> r.isExpiredAt(now);
          case RECLAIM_RETRYABLE -> r.state() == RecordState.FAILED_RETRYABLE;
          case RESUME_ABANDONED -> r.state() == RecordState.IN_PROGRESS && r.isLeaseExpiredAt(now);
          case RECOVER_UNKNOWN ->
              r.state() == RecordState.UNKNOWN_REQUIRES_RECOVERY && r.isLeaseExpiredAt(now);
        };
    if (!applies) {
      return Optional.empty();
    }
    IdempotencyRecord taken =
        kind == Takeover.REPLACE_EXPIRED
            ? new IdempotencyRecord(
                r.id(),
                record.fingerprint(),
                RecordState.IN_PROGRESS,
                r.fencingToken() + 1,
                now.plus(lease),
                null,
                null,
                Map.of(),
                0,
                null,
                now,
                now,
                now.plus(record.ttl()))
            : new IdempotencyRecord(
                r.id(),
                r.fingerprint(),
                RecordState.IN_PROGRESS,
                r.fencingToken() + 1,
                now.plus(lease),
                r.recoveryPoint(),
                r.pendingExternal(),
                r.recoveryData(),
                r.recoveryAttempts(),
                null,
                r.createdAt(),
                now,
                r.expiresAt());
    records.put(r.id(), taken);
    return Optional.of(taken);
  }

  @Override
  public Ownership renew(StoreTransaction tx, Ownership owner, Duration lease) {
    IdempotencyRecord r = owned(owner);
    Instant now = clock.instant();
    IdempotencyRecord renewed =
        with(
            r,
            r.state(),
            now.plus(lease),
            r.recoveryPoint(),
            r.pendingExternal(),
            r.recoveryData(),
            r.recoveryAttempts(),
            r.response(),
            now);
    records.put(r.id(), renewed);
    return Ownership.of(renewed);
  }

  @Override
  public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
    IdempotencyRecord r = owned(owner);
    records.put(
        r.id(),
        with(
            r,
            r.state(),
            r.lockedUntil(),
            checkpoint.recoveryPoint(),
            checkpoint.pendingExternal(),
            checkpoint.data(),
            r.recoveryAttempts(),
            null,
            clock.instant()));
  }

  @Override
  public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
    IdempotencyRecord r = owned(owner);
    Instant now = clock.instant();
    // The window restarts at completion (see IdempotencyStore#finish).
    Instant windowAfterCompletion = now.plus(Duration.between(r.createdAt(), r.expiresAt()));
    IdempotencyRecord finished =
        with(
            r,
            answer.state(),
            now,
            r.recoveryPoint(),
            null,
            r.recoveryData(),
            r.recoveryAttempts(),
            answer.response(),
            now);
    records.put(
        r.id(),
        new IdempotencyRecord(
            finished.id(),
            finished.fingerprint(),
            finished.state(),
            finished.fencingToken(),
            finished.lockedUntil(),
            finished.recoveryPoint(),
            finished.pendingExternal(),
            finished.recoveryData(),
            finished.recoveryAttempts(),
            finished.response(),
            finished.createdAt(),
            finished.updatedAt(),
            windowAfterCompletion.isAfter(r.expiresAt().plus(LATE_COMPLETION))
                ? windowAfterCompletion
                : r.expiresAt()));
  }

  /**
   * Transactions run one at a time here, so the insert never has to wait: a record of the key is
   * either committed already or absent, and a present one fails the insert as the database's
   * primary key would.
   */
  @Override
  public void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer) {
    ScopedKey id = record.id();
    if (records.containsKey(id)) {
      throw new RecordExistsException(id);
    }
    Instant now = clock.instant();
    records.put(
        id,
        new IdempotencyRecord(
            id,
            record.fingerprint(),
            answer.state(),
            1,
            now,
            null,
            null,
            Map.of(),
            0,
            answer.response(),
            now,
            now,
            now.plus(record.ttl())));
  }

  @Override
  public void suspend(StoreTransaction tx, Ownership owner, RecordState state) {
    if (state.isReplayable()) {
      throw new IllegalArgumentException("suspend does not take " + state);
    }
    IdempotencyRecord r = owned(owner);
    Instant now = clock.instant();
    int attempts = r.recoveryAttempts() + (state == RecordState.UNKNOWN_REQUIRES_RECOVERY ? 1 : 0);
    escalated.remove(r.id());
    records.put(
        r.id(),
        with(
            r,
            state,
            now,
            r.recoveryPoint(),
            r.pendingExternal(),
            r.recoveryData(),
            attempts,
            null,
            now));
  }

  /**
   * As the PostgreSQL store: with {@code n} attempts counted (the first request's included), the
   * next is due after {@code firstDelay * 2^(n-2)} ({@code firstDelay} after the recovery worker's
   * first attempt), at most {@code maxDelay}; at {@code maxAttempts} the record is escalated.
   */
  @Override
  public RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
    lock.lock();
    try {
      Instant now = clock.instant();
      IdempotencyRecord r = records.get(id);
      if (r == null
          || r.state() != RecordState.UNKNOWN_REQUIRES_RECOVERY
          || !r.isLeaseExpiredAt(now)) {
        return RecoveryBackoff.NOT_PENDING;
      }
      Duration delay =
          new RecoverySchedule(firstDelay, maxDelay, maxAttempts).delayAfter(r.recoveryAttempts());
      records.put(
          id,
          with(
              r,
              r.state(),
              now.plus(delay),
              r.recoveryPoint(),
              r.pendingExternal(),
              r.recoveryData(),
              r.recoveryAttempts(),
              r.response(),
              now));
      if (r.recoveryAttempts() < maxAttempts) {
        escalated.remove(id);
        return RecoveryBackoff.DEFERRED;
      }
      IdempotencyRecord spaced = records.get(id);
      records.put(
          id,
          new IdempotencyRecord(
              spaced.id(),
              spaced.fingerprint(),
              spaced.state(),
              spaced.fencingToken(),
              spaced.lockedUntil(),
              spaced.recoveryPoint(),
              spaced.pendingExternal(),
              spaced.recoveryData(),
              spaced.recoveryAttempts(),
              spaced.response(),
              spaced.createdAt(),
              spaced.updatedAt(),
              spaced.expiresAt(),
              r.escalatedAt() != null ? r.escalatedAt() : now));
      return escalated.add(id) ? RecoveryBackoff.ESCALATED : RecoveryBackoff.ALREADY_ESCALATED;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<Instant> oldestUnfinishedSince() {
    lock.lock();
    try {
      return records.values().stream()
          .filter(r -> r.state().isLive())
          .map(IdempotencyRecord::createdAt)
          .min(Comparator.naturalOrder());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
    lock.lock();
    try {
      Instant now = clock.instant();
      return records.values().stream()
          .filter(
              r ->
                  r.state() == RecordState.UNKNOWN_REQUIRES_RECOVERY
                      && !escalated.contains(r.id())
                      && !r.isLeaseExpiredAt(now))
          .sorted(Comparator.comparing(IdempotencyRecord::lockedUntil))
          .limit(limit)
          .toList();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<IdempotencyRecord> findEscalated(int limit) {
    lock.lock();
    try {
      return records.values().stream()
          .filter(
              r -> escalated.contains(r.id()) && r.state() == RecordState.UNKNOWN_REQUIRES_RECOVERY)
          .limit(limit)
          .toList();
    } finally {
      lock.unlock();
    }
  }

  /**
   * As the PostgreSQL store, without its history row (this store keeps no history): the verdict
   * stored in the recovery data, the attempts reset, the escalation lifted, and the record due now.
   */
  @Override
  public boolean resolve(ScopedKey id, OperatorResolution resolution, String actor, String reason) {
    lock.lock();
    try {
      Instant now = clock.instant();
      IdempotencyRecord r = records.get(id);
      if (r == null
          || r.state() != RecordState.UNKNOWN_REQUIRES_RECOVERY
          || OperatorResolution.pendingIn(r).isPresent()) {
        return false;
      }
      Map<String, String> data = new HashMap<>(r.recoveryData());
      data.remove(OperatorResolution.REFERENCE_KEY);
      data.put(OperatorResolution.OUTCOME_KEY, resolution.outcome());
      if (resolution.externalReference() != null) {
        data.put(OperatorResolution.REFERENCE_KEY, resolution.externalReference());
      }
      records.put(
          id,
          with(
              r,
              r.state(),
              now,
              r.recoveryPoint(),
              r.pendingExternal(),
              data,
              0,
              r.response(),
              now));
      escalated.remove(id);
      return true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<IdempotencyRecord> find(ScopedKey id) {
    lock.lock();
    try {
      return Optional.ofNullable(records.get(id));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit) {
    lock.lock();
    try {
      Instant now = clock.instant();
      return records.values().stream()
          .filter(r -> r.state().isLive() && r.isLeaseExpiredAt(now))
          .filter(r -> !escalated.contains(r.id()))
          .sorted(Comparator.comparing(IdempotencyRecord::lockedUntil))
          .limit(limit)
          .toList();
    } finally {
      lock.unlock();
    }
  }

  /** A run keeps no position: each of its batches does everything due at once. */
  @Override
  public CleanupRun beginRun() {
    return this::cleanupBatch;
  }

  /** Everything due at once (one "batch"): a test store has no traffic to make way for. */
  private CleanupResult cleanupBatch(
      Duration bodyRetention, Duration metadataRetention, int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
    }
    if (bodyRetention.isNegative() || metadataRetention.isNegative()) {
      throw new IllegalArgumentException("retentions cannot be negative");
    }
    lock.lock();
    try {
      Instant now = clock.instant();
      long dropped = 0;
      long deleted = 0;
      for (IdempotencyRecord r : List.copyOf(records.values())) {
        if (!r.isExpiredAt(now)) {
          continue;
        }
        if (!now.isBefore(r.expiresAt().plus(metadataRetention))
            && !now.isBefore(r.expiresAt().plus(bodyRetention))) {
          records.remove(r.id());
          deleted++;
        } else if (r.response() != null && !now.isBefore(r.expiresAt().plus(bodyRetention))) {
          records.put(
              r.id(),
              with(
                  r,
                  r.state(),
                  r.lockedUntil(),
                  r.recoveryPoint(),
                  r.pendingExternal(),
                  r.recoveryData(),
                  r.recoveryAttempts(),
                  null,
                  r.updatedAt()));
          dropped++;
        }
      }
      return new CleanupResult(dropped, deleted, 1);
    } finally {
      lock.unlock();
    }
  }

  private IdempotencyRecord owned(Ownership owner) {
    IdempotencyRecord r = records.get(owner.id());
    if (r == null
        || r.fencingToken() != owner.fencingToken()
        || r.state() != RecordState.IN_PROGRESS) {
      throw new LostOwnershipException(owner.id(), owner.fencingToken());
    }
    return r;
  }

  private static IdempotencyRecord with(
      IdempotencyRecord r,
      RecordState state,
      Instant lockedUntil,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data,
      int attempts,
      StoredResponse response,
      Instant updatedAt) {
    return new IdempotencyRecord(
        r.id(),
        r.fingerprint(),
        state,
        r.fencingToken(),
        lockedUntil,
        recoveryPoint,
        pendingExternal,
        data,
        attempts,
        response,
        r.createdAt(),
        updatedAt,
        r.expiresAt());
  }

  /**
   * The quota counts shared between engines on this store, as {@code PostgresQuotaSync} shares
   * them: each instance's own new keys per tenant and minute, and the live records counted from the
   * records. Under the store's lock, so it sees no transaction half done.
   */
  @Override
  public SharedQuotaCounts exchange(String instance, Instant minute, Map<String, Integer> own) {
    lock.lock();
    try {
      own.forEach(
          (tenant, keys) ->
              newKeys.merge(new KeyCounter(minute, tenant, instance), keys, Math::max));
      Map<String, Integer> others = new HashMap<>();
      newKeys.forEach(
          (counter, keys) -> {
            if (counter.minute().equals(minute) && !counter.instance().equals(instance)) {
              others.merge(counter.tenant(), keys, Integer::sum);
            }
          });
      Map<String, int[]> live = new HashMap<>();
      for (IdempotencyRecord r : records.values()) {
        if (r.state().isLive()) {
          int[] counts = live.computeIfAbsent(r.id().tenant(), t -> new int[2]);
          counts[0]++;
          if (r.state() == RecordState.UNKNOWN_REQUIRES_RECOVERY && escalated.contains(r.id())) {
            counts[1]++;
          }
        }
      }
      Map<String, LiveRecords> liveRecords = new HashMap<>();
      live.forEach((t, c) -> liveRecords.put(t, new LiveRecords(c[0], c[1])));
      return new SharedQuotaCounts(clock.instant(), others, liveRecords);
    } finally {
      lock.unlock();
    }
  }
}
