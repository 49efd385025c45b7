package dev.idemkit.spi;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A store that hands every call to another one, for wrappers that change a few calls (encryption,
 * counting, fault injection). Every method of {@link IdempotencyStore} is passed on, the ones with
 * defaults included, so a wrapper never falls back to a default that the real store overrides.
 */
public abstract class ForwardingIdempotencyStore implements IdempotencyStore {

  private final IdempotencyStore delegate;

  protected ForwardingIdempotencyStore(IdempotencyStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The store calls are passed to. */
  protected IdempotencyStore delegate() {
    return delegate;
  }

  @Override
  public <T> T inTransaction(TransactionWork<T> work) throws Exception {
    return delegate.inTransaction(work);
  }

  @Override
  public ClaimAttempt claim(
      StoreTransaction tx, ScopedKey id, Fingerprint fingerprint, Duration lease, Duration ttl) {
    return delegate.claim(tx, id, fingerprint, lease, ttl);
  }

  @Override
  public Optional<Snapshot> read(StoreTransaction tx, ScopedKey id) {
    return delegate.read(tx, id);
  }

  @Override
  public Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx,
      Snapshot seen,
      Takeover kind,
      Fingerprint fingerprint,
      Duration lease,
      Duration ttl) {
    return delegate.takeOver(tx, seen, kind, fingerprint, lease, ttl);
  }

  @Override
  public Ownership renew(StoreTransaction tx, Ownership owner, Duration lease) {
    return delegate.renew(tx, owner, lease);
  }

  @Override
  public void advance(
      StoreTransaction tx,
      Ownership owner,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data) {
    delegate.advance(tx, owner, recoveryPoint, pendingExternal, data);
  }

  @Override
  public void finish(
      StoreTransaction tx, Ownership owner, RecordState state, StoredResponse response) {
    delegate.finish(tx, owner, state, response);
  }

  @Override
  public void insertFinished(
      StoreTransaction tx,
      ScopedKey id,
      Fingerprint fingerprint,
      RecordState state,
      StoredResponse response,
      Duration ttl) {
    delegate.insertFinished(tx, id, fingerprint, state, response, ttl);
  }

  @Override
  public Ownership insertInProgress(
      StoreTransaction tx,
      ScopedKey id,
      Fingerprint fingerprint,
      Duration lease,
      Duration ttl,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data) {
    return delegate.insertInProgress(
        tx, id, fingerprint, lease, ttl, recoveryPoint, pendingExternal, data);
  }

  @Override
  public void suspend(StoreTransaction tx, Ownership owner, RecordState state) {
    delegate.suspend(tx, owner, state);
  }

  /**
   * Not passed on: the default reads through this store's own {@link #read}, so a wrapper that
   * changes what {@code read} returns changes what {@code peek} returns too. Override it to pass it
   * on when the wrapper leaves reads alone.
   */
  @Override
  public Optional<Snapshot> peek(ScopedKey id) {
    return IdempotencyStore.super.peek(id);
  }

  @Override
  public Optional<IdempotencyRecord> find(ScopedKey id) {
    return delegate.find(id);
  }

  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit) {
    return delegate.findNeedingRecovery(limit);
  }

  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit, Set<String> operations) {
    return delegate.findNeedingRecovery(limit, operations);
  }

  @Override
  public CleanupResult cleanup(Duration metadataRetention, int batchSize) {
    return delegate.cleanup(metadataRetention, batchSize);
  }

  @Override
  public CleanupResult cleanup(Duration bodyRetention, Duration metadataRetention, int batchSize) {
    return delegate.cleanup(bodyRetention, metadataRetention, batchSize);
  }

  @Override
  public void beginCleanupRun() {
    delegate.beginCleanupRun();
  }

  @Override
  public CleanupResult cleanupBatch(
      Duration bodyRetention, Duration metadataRetention, int batchSize) {
    return delegate.cleanupBatch(bodyRetention, metadataRetention, batchSize);
  }

  @Override
  public RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
    return delegate.backOffRecovery(id, firstDelay, maxDelay, maxAttempts);
  }

  @Override
  public Optional<Instant> oldestUnfinishedSince() {
    return delegate.oldestUnfinishedSince();
  }

  @Override
  public List<IdempotencyRecord> findEscalated(int limit) {
    return delegate.findEscalated(limit);
  }

  @Override
  public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
    return delegate.findAwaitingNextAttempt(limit);
  }

  @Override
  public boolean resolve(ScopedKey id, OperatorResolution resolution, String actor, String reason) {
    return delegate.resolve(id, resolution, actor, reason);
  }

  @Override
  public Optional<QuotaSync> quotaSync() {
    return delegate.quotaSync();
  }
}
