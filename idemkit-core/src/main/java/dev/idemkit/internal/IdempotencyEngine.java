package dev.idemkit.internal;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.ClaimWaitTimeoutException;
import dev.idemkit.ExternalEffectNotAppliedException;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.Operation;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.OutcomeStillUnknownException;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The engine behind {@link Idempotency}. Not API. */
public final class IdempotencyEngine implements Idempotency {

  /**
   * How often one request re-reads after losing a race for the same record. Each lost race means
   * another request changed the record in between, so a handful is plenty.
   */
  private static final int MAX_RACES = 16;

  private final IdempotencyStore store;
  private final IdempotencyConfig config;
  private final IdempotencyListener listener;

  /** The Retry-After when a claim gave up waiting for another request's claim of the key. */
  private static final Duration BUSY_RETRY_AFTER = Duration.ofSeconds(1);

  /** How long each operation recently took, for the Retry-After of in-progress answers. */
  private final RecentDurations durations = new RecentDurations();

  public IdempotencyEngine(IdempotencyStore store, IdempotencyConfig config) {
    this.store = store;
    this.config = config;
    this.listener = config.listener();
  }

  @Override
  public IdempotencyConfig config() {
    return config;
  }

  @Override
  public Outcome execute(IdempotentRequest request, Operation operation) {
    long started = System.nanoTime();
    Outcome outcome;
    if (operation instanceof LocalOperation local) {
      outcome = executeLocal(request, local);
    } else {
      outcome = executePhased(request, (PhasedOperation) operation);
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
    if (outcome instanceof Outcome.Executed || outcome instanceof Outcome.Rejected) {
      durations.record(request.id().operation(), elapsed);
    }
    listener.onOutcome(request.id(), outcome, elapsed);
    return outcome;
  }

  @Override
  public boolean hasRecord(ScopedKey id) {
    try {
      return store.inTransaction(
          tx ->
              store.read(tx, id).map(seen -> !seen.record().isExpiredAt(seen.now())).orElse(false));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not read the record of " + id, e);
    }
  }

  @Override
  public Optional<Outcome> recover(ScopedKey id, PhasedOperation operation) {
    long started = System.nanoTime();
    Acquired acquired;
    try {
      acquired =
          store.inTransaction(
              tx -> {
                Optional<Snapshot> seen = store.read(tx, id);
                if (seen.isEmpty()) {
                  return null;
                }
                IdempotencyRecord record = seen.get().record();
                if (!record.state().isLive() || !record.isLeaseExpiredAt(seen.get().now())) {
                  return null;
                }
                Takeover kind =
                    record.state() == RecordState.IN_PROGRESS
                        ? Takeover.RESUME_ABANDONED
                        : Takeover.RECOVER_UNKNOWN;
                Optional<IdempotencyRecord> mine =
                    store.takeOver(
                        tx,
                        seen.get(),
                        kind,
                        record.fingerprint(),
                        config.lease(),
                        config.defaultTtl());
                mine.ifPresent(r -> listener.onTakeover(id, kind));
                return mine.map(r -> Acquired.owned(Claim.resumed(r))).orElse(null);
              });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not take over " + id, e);
    }
    if (acquired == null) {
      return Optional.empty();
    }
    Outcome outcome = new PhaseRun(id, acquired.claim(), operation).run();
    listener.onOutcome(id, outcome, Duration.ofNanos(System.nanoTime() - started));
    return Optional.of(outcome);
  }

  // ---- single-transaction operations ------------------------------------------------------

  /**
   * Claim, business writes and completion commit in one transaction. A concurrent identical request
   * blocks on the claim's insert until this transaction ends, then sees the completed record and
   * replays it.
   */
  private Outcome executeLocal(IdempotentRequest request, LocalOperation operation) {
    try {
      return store.inTransaction(
          tx -> {
            Acquired acquired = acquire(tx, request);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            Claim claim = acquired.claim();
            Context ctx = new Context(request.id(), claim.data(), claim.resumed());
            ctx.tx = tx;
            OperationResult result = operation.run(ctx);
            return finish(tx, claim.ownership(), result);
          });
    } catch (ClaimWaitTimeoutException busy) {
      // Another request holds the key's claim in its transaction: nothing stored, ask to retry.
      return new Outcome.InProgress(BUSY_RETRY_AFTER);
    } catch (BusinessRejectionException rejection) {
      // The operation's transaction, claim included, was rolled back. Store the rejection alone.
      return storeRejection(request, rejection.response());
    } catch (LostOwnershipException lost) {
      listener.onLostOwnership(request.id());
      throw lost;
    } catch (RecordUnreadableException unreadable) {
      // Nothing ran: the stored answer cannot be read, and running again is never the answer.
      throw unreadable;
    } catch (Exception e) {
      listener.onFailure(request.id(), RecordState.FAILED_RETRYABLE, e);
      throw new OperationFailedException(
          "Operation " + request.id() + " failed; nothing was kept, a retry runs it again",
          RecordState.FAILED_RETRYABLE,
          e);
    }
  }

  private Outcome storeRejection(IdempotentRequest request, StoredResponse response) {
    try {
      return store.inTransaction(
          tx -> {
            Acquired acquired = acquire(tx, request);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            store.finish(tx, acquired.claim().ownership(), RecordState.FAILED_REPLAYABLE, response);
            return new Outcome.Rejected(response);
          });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not store the rejection of " + request.id(), e);
    }
  }

  // ---- phased operations ------------------------------------------------------------------

  private Outcome executePhased(IdempotentRequest request, PhasedOperation operation) {
    Acquired acquired;
    try {
      acquired =
          store.inTransaction(
              tx -> {
                Acquired a = acquire(tx, request);
                if (a.claim() == null) {
                  return a;
                }
                // Committed IN_PROGRESS from here on: renewing marks it for recovery workers.
                Claim c = a.claim();
                Ownership renewed = store.renew(tx, c.ownership(), config.lease());
                return Acquired.owned(
                    new Claim(
                        renewed, c.recoveryPoint(), c.pendingExternal(), c.data(), c.resumed()));
              });
    } catch (ClaimWaitTimeoutException busy) {
      return new Outcome.InProgress(BUSY_RETRY_AFTER);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not claim " + request.id(), e);
    }
    if (acquired.answer() != null) {
      return acquired.answer();
    }
    return new PhaseRun(request.id(), acquired.claim(), operation).run();
  }

  /** One owner's run through the phases, from the recovery point to the end. */
  private final class PhaseRun {
    private final ScopedKey id;
    private final PhasedOperation operation;
    private final Context ctx;
    private Ownership owner;

    /** When the current lease was last set (claim, takeover or renewal), on this JVM's clock. */
    private long leaseSetAt = System.nanoTime();

    private String recoveryPoint;
    private String pendingExternal;

    PhaseRun(ScopedKey id, Claim claim, PhasedOperation operation) {
      this.id = id;
      this.operation = operation;
      this.owner = claim.ownership();
      this.recoveryPoint = claim.recoveryPoint();
      this.pendingExternal = claim.pendingExternal();
      this.ctx = new Context(id, claim.data(), claim.resumed());
    }

    Outcome run() {
      try {
        if (pendingExternal != null) {
          Optional<Outcome> settled = recoverPendingExternal();
          if (settled.isPresent()) {
            return settled.get();
          }
        }
        var phases = operation.phases();
        for (int i = operation.indexAfter(recoveryPoint); i < phases.size(); i++) {
          PhasedOperation.Phase phase = phases.get(i);
          if (phase instanceof PhasedOperation.Local local) {
            inPhase(
                tx -> {
                  local.step().run(ctx);
                  store.advance(tx, owner, local.name(), null, ctx.data());
                  return null;
                });
            recoveryPoint = local.name();
          } else {
            Optional<Outcome> stopped = callExternal((PhasedOperation.External) phase);
            if (stopped.isPresent()) {
              return stopped.get();
            }
          }
        }
        OperationResult result = inPhase(tx -> operation.completion().run(ctx));
        return result instanceof OperationResult.Success
            ? new Outcome.Executed(result.response())
            : new Outcome.Rejected(result.response());
      } catch (LostOwnershipException lost) {
        listener.onLostOwnership(id);
        throw lost;
      } catch (BusinessRejectionException rejection) {
        return reject(rejection.response());
      } catch (OperationFailedException alreadySuspended) {
        throw alreadySuspended;
      } catch (Exception failure) {
        Throwable e = failure instanceof PhaseException ? failure.getCause() : failure;
        RecordState left =
            pendingExternal != null || operation.hasExternalEffectBy(recoveryPoint)
                ? RecordState.IN_PROGRESS
                : RecordState.FAILED_RETRYABLE;
        suspend(left);
        listener.onFailure(id, left, e);
        throw new OperationFailedException(
            left == RecordState.FAILED_RETRYABLE
                ? "Operation " + id + " failed before any external effect; a retry runs it again"
                : "Operation "
                    + id
                    + " failed after an external effect; a retry resumes after phase "
                    + recoveryPoint,
            left,
            e);
      }
    }

    /**
     * The previous owner may or may not have completed this external call. Ask the far side (never
     * a new call with a new key).
     */
    private Optional<Outcome> recoverPendingExternal() throws Exception {
      PhasedOperation.External phase =
          operation
              .external(pendingExternal)
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "Pending external phase '" + pendingExternal + "' is unknown"));
      try {
        phase.recover().call(ctx);
      } catch (OutcomeStillUnknownException stillUnknown) {
        return Optional.of(unknown());
      } catch (BusinessRejectionException rejection) {
        return Optional.of(reject(rejection.response()));
      } catch (ExternalEffectNotAppliedException notApplied) {
        // Nothing happened on the far side: the phase runs normally from the start.
        return Optional.empty();
      } catch (LostOwnershipException lost) {
        throw lost;
      } catch (Exception e) {
        return Optional.of(unknown());
      }
      recordExternal(phase);
      return Optional.empty();
    }

    private Optional<Outcome> callExternal(PhasedOperation.External phase) throws Exception {
      if (!phase.name().equals(pendingExternal)) {
        // Durably say the call may be under way before making it.
        inPhase(
            tx -> {
              phase.prepare().run(ctx);
              store.advance(tx, owner, recoveryPoint, phase.name(), ctx.data());
              return null;
            });
        pendingExternal = phase.name();
      }
      try {
        phase.call().call(ctx);
      } catch (BusinessRejectionException rejection) {
        return Optional.of(reject(rejection.response()));
      } catch (ExternalEffectNotAppliedException notApplied) {
        pendingExternal = null;
        RecordState left =
            operation.hasExternalEffectBy(recoveryPoint)
                ? RecordState.IN_PROGRESS
                : RecordState.FAILED_RETRYABLE;
        inPhase(
            tx -> {
              store.advance(tx, owner, recoveryPoint, null, ctx.data());
              store.suspend(tx, owner, left);
              return null;
            });
        listener.onFailure(id, left, notApplied);
        throw new OperationFailedException(
            "External phase " + phase.name() + " of " + id + " was not applied; retry",
            left,
            notApplied);
      } catch (Exception e) {
        return Optional.of(unknown());
      }
      recordExternal(phase);
      return Optional.empty();
    }

    private void recordExternal(PhasedOperation.External phase) throws Exception {
      inPhase(
          tx -> {
            phase.record().run(ctx);
            store.advance(tx, owner, phase.name(), null, ctx.data());
            return null;
          });
      recoveryPoint = phase.name();
      pendingExternal = null;
    }

    private Outcome unknown() {
      suspend(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      listener.onUnknownState(id);
      return new Outcome.OutcomePending(config.outcomePendingRetryAfter());
    }

    private Outcome reject(StoredResponse response) {
      inPhase(
          tx -> {
            store.finish(tx, owner, RecordState.FAILED_REPLAYABLE, response);
            return null;
          });
      return new Outcome.Rejected(response);
    }

    private void suspend(RecordState state) {
      inPhase(
          tx -> {
            store.suspend(tx, owner, state);
            return null;
          });
    }

    /**
     * One atomic phase: the work, then the record's write (advance, finish or suspend), which is
     * conditional on this owner's fencing token: if another owner took over meanwhile, that write
     * fails and the whole phase, business rows included, rolls back. The lease is renewed at the
     * start of a phase only once a third of it has passed (measured as a duration on this JVM,
     * never compared with the database's clock): a renewal is a round trip, and fencing, not the
     * lease, is what keeps two owners from both writing.
     */
    private <T> T inPhase(Work<T> work) {
      try {
        return store.inTransaction(
            tx -> {
              long now = System.nanoTime();
              if (now - leaseSetAt > config.lease().toNanos() / 3) {
                owner = store.renew(tx, owner, config.lease());
                leaseSetAt = now;
              }
              ctx.tx = tx;
              try {
                T value = work.run(tx);
                if (value instanceof OperationResult result) {
                  finish(tx, owner, result);
                }
                return value;
              } finally {
                ctx.tx = null;
              }
            });
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new PhaseException(e);
      }
    }
  }

  @FunctionalInterface
  private interface Work<T> {
    T run(StoreTransaction tx) throws Exception;
  }

  /** Carries a checked exception out of a phase; unwrapped by callers that care. */
  private static final class PhaseException extends RuntimeException {
    PhaseException(Exception cause) {
      super(cause);
    }
  }

  private Outcome finish(StoreTransaction tx, Ownership owner, OperationResult result) {
    if (result instanceof OperationResult.Success) {
      store.finish(tx, owner, RecordState.COMPLETED, result.response());
      return new Outcome.Executed(result.response());
    }
    store.finish(tx, owner, RecordState.FAILED_REPLAYABLE, result.response());
    return new Outcome.Rejected(result.response());
  }

  // ---- claiming ---------------------------------------------------------------------------

  /** Either an answer for the caller, or a claim that makes the caller the owner. */
  private record Acquired(Outcome answer, Claim claim) {
    static Acquired answer(Outcome outcome) {
      return new Acquired(outcome, null);
    }

    static Acquired owned(Claim claim) {
      return new Acquired(null, claim);
    }
  }

  private record Claim(
      Ownership ownership,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data,
      boolean resumed) {

    static Claim fresh(IdempotencyRecord record) {
      return new Claim(Ownership.of(record), null, null, new HashMap<>(), false);
    }

    static Claim resumed(IdempotencyRecord record) {
      return new Claim(
          Ownership.of(record),
          record.recoveryPoint(),
          record.pendingExternal(),
          new HashMap<>(record.recoveryData()),
          true);
    }
  }

  /**
   * Decides, by the contract's table, what the existing record means for this request. Every change
   * of owner is one conditional write in the store; losing it means someone else changed the
   * record, so the decision is taken again on what is there now.
   */
  private Acquired acquire(StoreTransaction tx, IdempotentRequest request) {
    ScopedKey id = request.id();
    Fingerprint fingerprint = request.fingerprint();
    for (int race = 0; race < MAX_RACES; race++) {
      ClaimAttempt attempt = store.claim(tx, id, fingerprint, config.lease(), request.ttl());
      if (attempt instanceof ClaimAttempt.Inserted inserted) {
        return Acquired.owned(Claim.fresh(inserted.record()));
      }
      Optional<Snapshot> seen =
          attempt instanceof ClaimAttempt.Found found
              ? Optional.of(found.snapshot())
              : store.read(tx, id);
      if (seen.isEmpty()) {
        continue;
      }
      Snapshot snapshot = seen.get();
      IdempotencyRecord record = snapshot.record();
      Instant now = snapshot.now();
      if (record.isExpiredAt(now)) {
        Optional<IdempotencyRecord> replaced =
            takeOver(tx, snapshot, Takeover.REPLACE_EXPIRED, request);
        if (replaced.isPresent()) {
          listener.onExpiredRetry(id);
          return Acquired.owned(Claim.fresh(replaced.get()));
        }
        continue;
      }
      if (!request.sameCommandAs(record.fingerprint())) {
        return Acquired.answer(new Outcome.Mismatch());
      }
      Takeover kind;
      switch (record.state()) {
        case COMPLETED, FAILED_REPLAYABLE -> {
          StoredResponse response =
              record
                  .storedResponse()
                  .orElseThrow(
                      () ->
                          new IllegalStateException(
                              id + " is " + record.state() + " but has no response"));
          return Acquired.answer(new Outcome.Replayed(response, record.state()));
        }
        case FAILED_RETRYABLE -> kind = Takeover.RECLAIM_RETRYABLE;
        case IN_PROGRESS -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(
                new Outcome.InProgress(
                    durations.retryAfter(
                        id.operation(), Duration.between(now, record.lockedUntil()))));
          }
          kind = Takeover.RESUME_ABANDONED;
        }
        case UNKNOWN_REQUIRES_RECOVERY -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(new Outcome.OutcomePending(retryAfter(record, now)));
          }
          kind = Takeover.RECOVER_UNKNOWN;
        }
        default -> throw new IllegalStateException("Unknown state " + record.state());
      }
      Optional<IdempotencyRecord> mine = takeOver(tx, snapshot, kind, request);
      if (mine.isPresent()) {
        return Acquired.owned(Claim.resumed(mine.get()));
      }
    }
    throw new IllegalStateException(
        "Gave up on " + id + " after losing " + MAX_RACES + " races for its record");
  }

  private Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, IdempotentRequest request) {
    Optional<IdempotencyRecord> taken =
        store.takeOver(tx, seen, kind, request.fingerprint(), config.lease(), request.ttl());
    taken.ifPresent(r -> listener.onTakeover(request.id(), kind));
    return taken;
  }

  /** Whole seconds until the lease runs out, at least one. */
  private static Duration retryAfter(IdempotencyRecord record, Instant now) {
    Duration left = Duration.between(now, record.lockedUntil());
    long seconds = Math.max(1, (left.toMillis() + 999) / 1000);
    return Duration.ofSeconds(seconds);
  }

  /** The context handed to operations and phases. */
  private static final class Context implements dev.idemkit.OperationContext {
    private final ScopedKey id;
    private final Map<String, String> data;
    private final boolean resumed;
    private StoreTransaction tx;

    Context(ScopedKey id, Map<String, String> data, boolean resumed) {
      this.id = id;
      this.data = data;
      this.resumed = resumed;
    }

    @Override
    public ScopedKey id() {
      return id;
    }

    @Override
    public Map<String, String> data() {
      return data;
    }

    @Override
    public boolean resumed() {
      return resumed;
    }

    @Override
    public StoreTransaction transaction() {
      if (tx == null) {
        throw new IllegalStateException(
            "No transaction here: external calls run outside any transaction");
      }
      return tx;
    }
  }
}
