package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A store that hands every call to another one, for wrappers that change a few calls (encryption,
 * counting, fault injection). Every method of {@link IdempotencyStore} is passed on, the ones with
 * defaults included, so a wrapper never falls back to a default that the real store overrides; so
 * is the lookup of the store's capabilities ({@link #capability}), so the wrapper has exactly the
 * capabilities of the store underneath.
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
  public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
    return delegate.claim(tx, record, lease);
  }

  @Override
  public Optional<Snapshot> read(StoreTransaction tx, ScopedKey id) {
    return delegate.read(tx, id);
  }

  @Override
  public Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, NewRecord record, Duration lease) {
    return delegate.takeOver(tx, seen, kind, record, lease);
  }

  @Override
  public Ownership renew(StoreTransaction tx, Ownership owner, Duration lease) {
    return delegate.renew(tx, owner, lease);
  }

  @Override
  public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
    delegate.advance(tx, owner, checkpoint);
  }

  @Override
  public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
    delegate.finish(tx, owner, answer);
  }

  @Override
  public void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer) {
    delegate.insertFinished(tx, record, answer);
  }

  @Override
  public Ownership insertInProgress(
      StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
    return delegate.insertInProgress(tx, record, lease, checkpoint);
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
  public Optional<Instant> oldestUnfinishedSince() {
    return delegate.oldestUnfinishedSince();
  }

  /**
   * The delegate's capability, as the delegate serves it: a wrapper never claims a capability its
   * delegate lacks, even one the wrapper's class implements. A wrapper that changes a capability's
   * calls (sealing what goes in, opening what comes out, counting, failing) overrides this, takes
   * the delegate's with {@code super.capability(type)} and wraps it.
   */
  @Override
  public <T> Optional<T> capability(Class<T> type) {
    return delegate.capability(type);
  }
}
