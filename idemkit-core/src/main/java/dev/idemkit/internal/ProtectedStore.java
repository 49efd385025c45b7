package dev.idemkit.internal;

import dev.idemkit.DataProtection;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A store seen through {@link DataProtection}: answers and recovery data are redacted, reduced
 * (replay mode) and sealed on the way in, opened, rebuilt and upcast on the way out. Not API.
 *
 * <p>What the protection does to a record ({@link RecordProtection}: redaction, replay mode,
 * sealing, opening, rebuilding, upcasting) lives apart; this class is the store wrapper that
 * applies it to each SPI call and to the recovery administration.
 */
public final class ProtectedStore extends ForwardingIdempotencyStore {

  /** What the protection does to answers and data, on the way in and out. */
  private final RecordProtection protection;

  /**
   * @param keys the tenant data keys of {@code protection}, or {@code null} when it has none
   * @param seals whether new answers and recovery data are sealed with {@code keys}; if not, the
   *     keys only open what was sealed earlier (encryption turned off)
   */
  public ProtectedStore(
      IdempotencyStore delegate, DataProtection protection, TenantKeyring keys, boolean seals) {
    super(delegate);
    this.protection = new RecordProtection(protection, keys, seals);
  }

  /** The store underneath (for tests and tools that need the raw records). */
  @Override
  public IdempotencyStore delegate() {
    return super.delegate();
  }

  @Override
  public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
    ClaimAttempt attempt = delegate().claim(tx, record, lease);
    if (attempt instanceof ClaimAttempt.Found found) {
      return new ClaimAttempt.Found(protection.open(tx, found.snapshot()));
    }
    return attempt;
  }

  @Override
  public Optional<Snapshot> read(StoreTransaction tx, ScopedKey id) {
    return delegate().read(tx, id).map(s -> protection.open(tx, s));
  }

  @Override
  public Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, NewRecord record, Duration lease) {
    return delegate()
        .takeOver(tx, seen, kind, record, lease)
        .map(r -> protection.open(tx, r, null, true));
  }

  @Override
  public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
    delegate().advance(tx, owner, protection.seal(tx, owner.id(), checkpoint));
  }

  @Override
  public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
    delegate().finish(tx, owner, protection.seal(tx, owner.id(), answer));
  }

  @Override
  public void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer) {
    delegate().insertFinished(tx, record, protection.seal(tx, record.id(), answer));
  }

  @Override
  public Ownership insertInProgress(
      StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
    return delegate()
        .insertInProgress(tx, record, lease, protection.seal(tx, record.id(), checkpoint));
  }

  @Override
  public Optional<Snapshot> peek(ScopedKey id) {
    return delegate().peek(id).map(s -> protection.open(null, s));
  }

  @Override
  public Optional<IdempotencyRecord> find(ScopedKey id) {
    return delegate().find(id).map(r -> protection.open(null, r, null, true));
  }

  /** Records needing recovery; one that cannot be opened is listed as stored (its id is enough). */
  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit) {
    return delegate().findNeedingRecovery(limit).stream()
        .map(
            r -> {
              try {
                return protection.open(null, r, null, true);
              } catch (RecordUnreadableException e) {
                return r;
              }
            })
        .toList();
  }

  /** Like {@link #findNeedingRecovery(int)}, for the operations a worker can resume. */
  @Override
  public List<IdempotencyRecord> findNeedingRecovery(int limit, Set<String> operations) {
    return delegate().findNeedingRecovery(limit, operations).stream()
        .map(this::openForListing)
        .toList();
  }

  /**
   * The store's capabilities; its {@link RecoveryAdministration} seen through the protection too
   * ({@link Administration}). The others pass through: cleanup drops and deletes whole rows, and
   * quota counts hold no answers.
   */
  @Override
  public <T> Optional<T> capability(Class<T> type) {
    if (type == RecoveryAdministration.class) {
      return super.capability(RecoveryAdministration.class)
          .map(administration -> type.cast(new Administration(administration)));
    }
    return super.capability(type);
  }

  /** The store's recovery administration: records listed opened, verdicts sealed. */
  private final class Administration implements RecoveryAdministration {

    private final RecoveryAdministration delegate;

    Administration(RecoveryAdministration delegate) {
      this.delegate = delegate;
    }

    @Override
    public RecoveryBackoff backOffRecovery(
        ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
      return delegate.backOffRecovery(id, firstDelay, maxDelay, maxAttempts);
    }

    @Override
    public List<IdempotencyRecord> findEscalated(int limit) {
      return delegate.findEscalated(limit).stream()
          .map(ProtectedStore.this::openForListing)
          .toList();
    }

    @Override
    public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
      return delegate.findAwaitingNextAttempt(limit).stream()
          .map(ProtectedStore.this::openForListing)
          .toList();
    }

    /**
     * An operator's verdict goes into the recovery data beside what was sealed (the store adds it
     * in SQL): the external reference that comes with it (a provider's charge id) is sealed first
     * ({@link RecordProtection#sealVerdict}), as the rest of the recovery data is, and opened again
     * when the record is read.
     */
    @Override
    public boolean resolve(
        ScopedKey id, OperatorResolution resolution, String actor, String reason) {
      return delegate.resolve(id, protection.sealVerdict(id, resolution), actor, reason);
    }
  }

  private IdempotencyRecord openForListing(IdempotencyRecord r) {
    try {
      return protection.open(null, r, null, true);
    } catch (RecordUnreadableException e) {
      return r;
    }
  }
}
