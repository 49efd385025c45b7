package dev.idemkit.internal;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.ClaimWaitTimeoutException;
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
import dev.idemkit.PhasedOperation;
import dev.idemkit.QuotaExceededException;
import dev.idemkit.Quotas;
import dev.idemkit.RecordState;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.internal.RecordAcquisition.Acquired;
import dev.idemkit.internal.RecordAcquisition.NoRecord;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.RecordExistsException;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreCapabilities;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** The engine behind {@link Idempotency}. Not API. */
public final class IdempotencyEngine implements Idempotency {

  private static final System.Logger LOG = System.getLogger(IdempotencyEngine.class.getName());

  final IdempotencyStore store;
  final IdempotencyConfig config;
  final IdempotencyListener listener;
  final LongSupplier ticker;

  /** How long each operation recently took, for the Retry-After of in-progress answers. */
  private final RecentDurations durations = new RecentDurations();

  /** How often each operation's requests were replays: whether to read the record first. */
  private final ReplayRates replays = new ReplayRates();

  /**
   * The quotas' admissions, decided in memory; shared with other instances by {@link #syncQuotas}.
   */
  private final QuotaGate quotaGate;

  /** Each tenant's places for requests running at once ({@link Quotas#concurrentRequests()}). */
  private final TenantBulkhead bulkhead;

  /** What an existing record means for a request, and the claims and takeovers that follow. */
  private final RecordAcquisition acquisition;

  /** The store's recovery administration when the config has a recovery schedule, else null. */
  final RecoveryAdministration recovery;

  /** How the store shares quota counts when the config has quotas, else null. */
  private final QuotaSync quotaSync;

  /**
   * @throws IllegalArgumentException if {@code store} lacks a capability {@code config} needs: a
   *     recovery schedule needs {@link RecoveryAdministration}, quotas need {@link QuotaSync}
   */
  public IdempotencyEngine(IdempotencyStore store, IdempotencyConfig config) {
    this.store = store;
    this.config = config;
    this.listener = config.listener();
    this.ticker = config.ticker();
    this.quotaGate = new QuotaGate(config.quotas(), ticker);
    this.bulkhead = new TenantBulkhead(config.quotas().concurrentRequests());
    this.acquisition = new RecordAcquisition(store, config, listener, durations);
    this.recovery =
        config.recoverySchedule() == null
            ? null
            : StoreCapabilities.require(
                store,
                RecoveryAdministration.class,
                "a recovery schedule (IdempotencyConfig.Builder.recoverySchedule)");
    this.quotaSync =
        config.quotas().enabled()
            ? StoreCapabilities.require(
                store, QuotaSync.class, "quotas (IdempotencyConfig.Builder.quotas)")
            : null;
  }

  @Override
  public void syncQuotas() {
    if (quotaSync != null) {
      quotaGate.exchange(quotaSync);
    }
  }

  @Override
  public IdempotencyConfig config() {
    return config;
  }

  @Override
  public Outcome execute(IdempotentRequest request, Operation operation) {
    return run(request, operation, true);
  }

  @Override
  public Optional<Outcome> executeExisting(IdempotentRequest request, Operation operation) {
    return Optional.ofNullable(run(request, operation, false));
  }

  /**
   * {@link #execute}, or with {@code mayMakeRecord} false {@link #executeExisting}: null when the
   * key has no record that answers and none was made.
   */
  private Outcome run(IdempotentRequest request, Operation operation, boolean mayMakeRecord) {
    String tenant = request.id().tenant();
    if (!bulkhead.enter(tenant)) {
      Outcome.QuotaExceeded refused = bulkhead.refusal();
      listener.onQuotaExceeded(request.id(), refused.quota());
      return refused;
    }
    try {
      return runInPlace(request, operation, mayMakeRecord);
    } finally {
      bulkhead.leave(tenant);
    }
  }

  /** {@link #run} once the request has one of its tenant's places ({@link TenantBulkhead}). */
  private Outcome runInPlace(
      IdempotentRequest request, Operation operation, boolean mayMakeRecord) {
    long started = System.nanoTime();
    String name = request.id().operation();
    Outcome outcome;
    try {
      Optional<Outcome.QuotaExceeded> full =
          mayMakeRecord && quotaSync != null
              ? quotaGate.refusal(request.id().tenant())
              : Optional.empty();
      if (full.isPresent()) {
        outcome = refusedOrAnswered(request, full.get());
      } else {
        outcome = replays.readFirst(name) ? answerFromRecord(request) : null;
      }
      if (outcome == null && operation instanceof LocalOperation local) {
        outcome =
            mayMakeRecord && !local.claimsFirst()
                ? executeLocalRecordLast(request, local)
                : executeLocal(request, local, mayMakeRecord);
      } else if (outcome == null) {
        PhasedOperation<?> phased = (PhasedOperation<?>) operation;
        outcome =
            mayMakeRecord && !phased.claimsFirst()
                ? executePhasedRecordLast(request, phased)
                : executePhased(request, phased, mayMakeRecord);
      }
    } catch (NoRecord none) {
      // Nothing was made: the claim that would have made the record rolled back with its
      // transaction, before any operation ran.
      return null;
    } catch (RecordUnreadableException unreadable) {
      // Nothing ran. The answer cannot be read, but a different command is a mismatch whatever
      // the record holds: the fingerprint is stored in the clear.
      if (unreadable.recordedFingerprint().map(request::sameCommandAs).orElse(true)) {
        throw unreadable;
      }
      outcome = new Outcome.Mismatch();
    }
    replays.record(name, outcome instanceof Outcome.Replayed);
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
    if (outcome.ranToItsEnd()) {
      durations.record(name, elapsed);
    }
    listener.onOutcome(request.id(), outcome, elapsed);
    return outcome;
  }

  /**
   * The answer a finished record gives, read with one auto-commit read and no transaction; null
   * when the record is absent, expired or not finished, and the usual claim decides. A finished
   * record (and its fingerprint) cannot change until it expires, and expiry is judged on the
   * store's clock in the same read, so this answer is the one the claim would give ({@link
   * RecordAcquisition#finishedAnswer}, which {@link RecordAcquisition#acquire} asks too).
   */
  private Outcome answerFromRecord(IdempotentRequest request) {
    Optional<Snapshot> seen = store.peek(request.id());
    return isAbsentOrExpired(seen) ? null : answerFrom(seen.get().record(), request);
  }

  private static boolean isAbsentOrExpired(Optional<Snapshot> seen) {
    return seen.isEmpty() || seen.get().record().isExpiredAt(seen.get().now());
  }

  /**
   * What a present, unexpired {@code record} answers {@code request}: null if it is not finished.
   */
  private static Outcome answerFrom(IdempotencyRecord record, IdempotentRequest request) {
    return record.state().isReplayable()
        ? RecordAcquisition.finishedAnswer(record, request).orElse(null)
        : null;
  }

  /**
   * A request of a tenant whose quota is already full ({@code full}, {@link QuotaGate#refusal}):
   * decided with one auto-commit read of the key's record and no transaction, so a flood over the
   * quota costs the database one index lookup per request and holds a connection only for it, not
   * the operation's statements, their rollback and a second read. A key with no record (or only an
   * expired one) is refused; a finished record answers; any other record (in progress, awaiting
   * recovery, failed retryably) answers null and the request goes the usual way, where the quota is
   * asked again as the claim's last step. A key whose first request has not committed yet reads as
   * no record and is refused, as it would be at its own claim: it has no record yet.
   */
  private Outcome refusedOrAnswered(IdempotentRequest request, Outcome.QuotaExceeded full) {
    Optional<Snapshot> seen = store.peek(request.id());
    if (isAbsentOrExpired(seen)) {
      listener.onQuotaExceeded(request.id(), full.quota());
      return full;
    }
    return answerFrom(seen.get().record(), request);
  }

  /**
   * Another request holds the key's claim (in its transaction, or in its claim statement on this
   * instance): nothing was stored. If the key's record has finished meanwhile (a concurrent retry
   * of a completed request), its answer; otherwise "in progress", to retry later.
   */
  private Outcome busyAnswer(IdempotentRequest request) {
    Outcome finished = answerFromRecord(request);
    // The first request's claim is not committed yet: how long the operation recently took (90th
    // percentile, at least 1 s), as for a record in progress, capped by a whole lease.
    return finished != null
        ? finished
        : new Outcome.InProgress(durations.retryAfter(request.id().operation(), config.lease()));
  }

  @Override
  public Optional<Outcome> recover(ScopedKey id, PhasedOperation<?> operation) {
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
                        new NewRecord(id, record.fingerprint(), config.defaultTtl()),
                        config.lease());
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
    Outcome outcome = new PhaseRun<>(this, id, acquired.claim(), operation, false).resume();
    listener.onOutcome(id, outcome, Duration.ofNanos(System.nanoTime() - started));
    return Optional.of(outcome);
  }

  // ---- single-transaction operations ------------------------------------------------------

  /**
   * The record written once, last (contract §5): the operation's statements run first, then its
   * record is inserted, already finished with the answer, as the transaction's last statement (the
   * store may send it with the commit, in one round trip), then the commit. Nothing holds the key
   * while the operation runs, and a first execution writes its record once.
   *
   * <p>Two requests meet at the insert. A concurrent duplicate runs the operation too; its insert
   * waits on the first's uncommitted record and fails once that commits, and its whole transaction,
   * business writes included, rolls back: the insert is plain, never one that does nothing on
   * conflict, so no commit sent with it can keep those writes. It is then answered from the first's
   * record: a replay, or the mismatch of another command. A business statement that meets the
   * first's rows (a unique violation on a business key, once the first committed) fails the
   * transaction the same way, and is answered from the record too, if one answers. A record that is
   * there but answers nothing (expired, or held by a claim-first run) sends the request the
   * claim-first way ({@link #executeLocal}), which takes over an expired record or answers "in
   * progress".
   */
  private Outcome executeLocalRecordLast(IdempotentRequest request, LocalOperation operation) {
    ScopedKey id = request.id();
    QuotaGate.Ticket[] admitted = {null};
    try {
      return store.inTransaction(
          tx -> {
            RunContext ctx = new RunContext(id, false, Optional.empty());
            ctx.tx = tx;
            Outcome done = insertFinished(tx, request, operation.run(ctx));
            admitted[0] = admitNew(id, false);
            return done;
          });
    } catch (BusinessRejectionException rejection) {
      // The operation's transaction was rolled back. Store the rejection alone.
      return storeRejection(request, rejection.response(), true);
    } catch (Exception e) {
      giveBack(admitted[0], id);
      return afterRecordLastRollback(request, e, () -> executeLocal(request, operation, true));
    }
  }

  /**
   * What a record-last run ({@link #executeLocalRecordLast}, {@link #executePhasedRecordLast})
   * answers once its transaction rolled back with {@code failure}. When the key has a record (its
   * insert met one, or a concurrent duplicate committed first and this run's statements met its
   * rows, a unique violation on a business key), that record's answer, or {@code claimFirst} when
   * it answers nothing yet (in progress: "in progress"; expired or failed retryably: taken over). A
   * quota refusal stands only for a key with no record: a key that has one is never refused.
   * Otherwise the failure is this run's own, and nothing was kept.
   */
  private Outcome afterRecordLastRollback(
      IdempotentRequest request, Exception failure, Supplier<Outcome> claimFirst) {
    ScopedKey id = request.id();
    if (failure instanceof RecordExistsException) {
      return answerOr(request, claimFirst);
    }
    if (failure instanceof RecordUnreadableException unreadable) {
      throw unreadable;
    }
    boolean recorded;
    try {
      recorded = hasUnexpiredRecord(id);
    } catch (RecordUnreadableException unreadable) {
      throw unreadable; // a record is there; what it answers cannot be read
    } catch (RuntimeException unreachable) {
      if (failure instanceof QuotaExceededException) {
        throw unreachable;
      }
      // The database out of reach: the failure is what the caller learns.
      failure.addSuppressed(unreachable);
      recorded = false;
    }
    if (recorded) {
      return answerOr(request, claimFirst);
    }
    if (failure instanceof QuotaExceededException refused) {
      listener.onQuotaExceeded(id, refused.outcome().quota());
      return refused.outcome();
    }
    listener.onFailure(id, RecordState.FAILED_RETRYABLE, failure);
    throw new OperationFailedException(
        "Operation " + id + " failed before its first commit; nothing was kept, a retry runs it",
        RecordState.FAILED_RETRYABLE,
        failure);
  }

  /** The answer of the key's record, or {@code claimFirst} when it answers nothing. */
  private Outcome answerOr(IdempotentRequest request, Supplier<Outcome> claimFirst) {
    Outcome recorded = answerFromRecord(request);
    return recorded != null ? recorded : claimFirst.get();
  }

  /**
   * Claim, business writes and completion commit in one transaction. A concurrent identical request
   * blocks on the claim's insert until this transaction ends, then sees the completed record and
   * replays it.
   */
  private Outcome executeLocal(
      IdempotentRequest request, LocalOperation operation, boolean mayMakeRecord) {
    try {
      return store.inTransaction(
          tx -> {
            Acquired acquired = acquisition.acquire(tx, request, mayMakeRecord);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            Claim claim = acquired.claim();
            RunContext ctx = new RunContext(request.id(), claim.resumed(), Optional.empty());
            ctx.tx = tx;
            OperationResult result = operation.run(ctx);
            Outcome done = finish(tx, claim.ownership(), result);
            admitIfNew(tx, request.id(), claim);
            return done;
          });
    } catch (NoRecord none) {
      throw none;
    } catch (QuotaExceededException refused) {
      listener.onQuotaExceeded(request.id(), refused.outcome().quota());
      return refused.outcome();
    } catch (ClaimWaitTimeoutException busy) {
      return busyAnswer(request);
    } catch (BusinessRejectionException rejection) {
      // The operation's transaction, claim included, was rolled back. Store the rejection alone.
      return storeRejection(request, rejection.response(), mayMakeRecord);
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

  private Outcome storeRejection(
      IdempotentRequest request, StoredResponse response, boolean mayMakeRecord) {
    try {
      return store.inTransaction(
          tx -> {
            Acquired acquired = acquisition.acquire(tx, request, mayMakeRecord);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            store.finish(tx, acquired.claim().ownership(), FinalAnswer.failed(response));
            admitIfNew(tx, request.id(), acquired.claim());
            return new Outcome.Rejected(response);
          });
    } catch (QuotaExceededException refused) {
      listener.onQuotaExceeded(request.id(), refused.outcome().quota());
      return refused.outcome();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Could not store the rejection of " + request.id(), e);
    }
  }

  // ---- phased operations ------------------------------------------------------------------

  /**
   * The first transaction claims the key and runs every local phase up to the first call's marker
   * (or to the completion, if no call is left): one commit. A concurrent identical request blocks
   * on the claim's insert until it ends, then sees the record in progress (or completed).
   */
  private Outcome executePhased(
      IdempotentRequest request, PhasedOperation<?> operation, boolean mayMakeRecord) {
    ScopedKey id = request.id();
    List<PhaseRun<?>> owned = new ArrayList<>(1);
    List<QuotaGate.Ticket> admitted = new ArrayList<>(1);
    Progress progress;
    boolean committed = false;
    try {
      progress =
          store.inTransaction(
              tx -> {
                Acquired acquired = acquisition.acquire(tx, request, mayMakeRecord);
                if (acquired.answer() != null) {
                  return new Progress.Ended(acquired.answer());
                }
                PhaseRun<?> run = new PhaseRun<>(this, id, acquired.claim(), operation, true);
                owned.add(run);
                if (run.effectBeforeThisRun) {
                  // The takeover commits alone: the far side is asked first if a call is under
                  // way, and a local phase that fails after an effect is an attempt the record
                  // counts (rolled back with the takeover, it would be tried again for ever).
                  return Progress.RESUME;
                }
                Progress done = run.localPhases(tx);
                admitted.add(admitIfNew(id, acquired.claim(), done.leavesTheRecordLive()));
                return done;
              });
      committed = true;
    } catch (NoRecord none) {
      throw none;
    } catch (QuotaExceededException refused) {
      listener.onQuotaExceeded(id, refused.outcome().quota());
      return refused.outcome();
    } catch (ClaimWaitTimeoutException busy) {
      return busyAnswer(request);
    } catch (LostOwnershipException lost) {
      listener.onLostOwnership(id);
      throw lost;
    } catch (RecordUnreadableException unreadable) {
      throw unreadable;
    } catch (Exception e) {
      // Rolled back, claim or takeover included: the record is as it was before this request.
      RecordState left =
          owned.isEmpty() ? RecordState.FAILED_RETRYABLE : owned.get(0).stateBeforeThisRun();
      listener.onFailure(id, left, e);
      throw new OperationFailedException(
          "Operation " + id + " failed before its first commit; nothing was kept, a retry runs it",
          left,
          e);
    } finally {
      if (!committed) {
        admitted.forEach(ticket -> ticket.ended(false)); // rolled back: no record, no live place
      }
    }
    QuotaGate.Ticket ticket = admitted.isEmpty() ? QuotaGate.Ticket.NONE : admitted.get(0);
    return goOn(progress, owned.isEmpty() ? null : owned.get(0), ticket);
  }

  /**
   * After a phased run's first commit: goes on as {@code progress} says, then gives back the live
   * place {@code ticket} holds unless the record stays live.
   */
  private Outcome goOn(Progress progress, PhaseRun<?> run, QuotaGate.Ticket ticket) {
    ticket.committed(quotaGate);
    Outcome answer = null;
    try {
      answer = progress.then(run);
    } finally {
      ticket.ended(answer == null || !answer.ranToItsEnd());
    }
    return answer;
  }

  /**
   * The record written once per commit (contract §5): the first transaction runs the local phases
   * up to the first call's marker, then inserts the record as the marker leaves it (in progress,
   * the recovery point, the call named as possibly under way) as its last statement, sent with the
   * commit; the call follows, and the second transaction carries its result, the local phases after
   * it and the completion, a fenced update. An operation that ends before any call inserts its
   * record finished instead, as a local operation does. Nothing holds the key while the first
   * transaction runs.
   *
   * <p>Two requests meet at the insert, as local operations' do ({@link #executeLocalRecordLast}):
   * a concurrent duplicate runs the local phases too, its insert fails on the key once the first's
   * commits, and its whole transaction rolls back, so it never makes the call; it is answered from
   * the first's record, or the claim-first way ({@link #executePhased}) when that record answers
   * nothing yet (in progress: "in progress"; expired or failed retryably: taken over). A business
   * statement that meets the first's rows fails the duplicate's transaction the same way.
   */
  private Outcome executePhasedRecordLast(IdempotentRequest request, PhasedOperation<?> operation) {
    ScopedKey id = request.id();
    PhaseRun<?> run = new PhaseRun<>(this, request, operation);
    QuotaGate.Ticket[] admitted = {null};
    Progress progress;
    try {
      progress =
          store.inTransaction(
              tx -> {
                Progress done = run.localPhases(tx);
                admitted[0] = admitNew(id, done.leavesTheRecordLive());
                return done;
              });
    } catch (Exception e) {
      giveBack(admitted[0], id);
      return afterRecordLastRollback(request, e, () -> executePhased(request, operation, true));
    }
    return goOn(progress, run, admitted[0] == null ? QuotaGate.Ticket.NONE : admitted[0]);
  }

  /** A new key counted by a transaction that rolled back: no record, no live place, no new key. */
  private void giveBack(QuotaGate.Ticket ticket, ScopedKey id) {
    if (ticket != null) {
      ticket.ended(false);
      quotaGate.release(id.tenant());
    }
  }

  /**
   * Counts a new operation against its tenant's quotas ({@link IdempotencyConfig#quotas()}) as the
   * last step of the transaction that claimed it, right before its commit, in memory ({@link
   * QuotaGate}: no statement). A refusal throws {@link QuotaExceededException}, which rolls the
   * whole transaction back, claim included, and is caught where the transaction began. ({@code tx}
   * is not used: the count touches no SQL.)
   */
  private void admitIfNew(StoreTransaction tx, ScopedKey id, Claim claim) {
    admitIfNew(id, claim, false);
  }

  /**
   * {@link #admitIfNew(StoreTransaction, ScopedKey, Claim)}, for an operation whose record {@code
   * staysLive} after this transaction (a phased operation with a call pending): it takes one of the
   * tenant's live places, held by the ticket answered.
   */
  private QuotaGate.Ticket admitIfNew(ScopedKey id, Claim claim, boolean staysLive) {
    if (claim.resumed() || !config.quotas().enabled()) {
      return QuotaGate.Ticket.NONE;
    }
    return quotaGate.admit(id.tenant(), staysLive);
  }

  /**
   * Counts a new key whose record this transaction inserts last ({@link #executeLocalRecordLast},
   * {@link #executePhasedRecordLast}): in memory, before the commit. A refusal throws {@link
   * QuotaExceededException} and the transaction rolls back. A record that {@code staysLive} after
   * the commit (a call pending) takes a live place, held by the ticket answered.
   *
   * @return null when nothing was counted, else the key's ticket ({@link #giveBack} returns it when
   *     the key had a record after all)
   */
  private QuotaGate.Ticket admitNew(ScopedKey id, boolean staysLive) {
    if (!config.quotas().enabled()) {
      return null;
    }
    return quotaGate.admit(id.tenant(), staysLive);
  }

  private boolean hasUnexpiredRecord(ScopedKey id) {
    return !isAbsentOrExpired(store.peek(id));
  }

  /** {@code request}'s record inserted finished with {@code result}, as {@code tx}'s last write. */
  Outcome insertFinished(StoreTransaction tx, IdempotentRequest request, OperationResult result) {
    store.insertFinished(tx, NewRecord.of(request), answer(result));
    return ended(result);
  }

  Outcome finish(StoreTransaction tx, Ownership owner, OperationResult result) {
    store.finish(tx, owner, answer(result));
    return ended(result);
  }

  /** What the store keeps of an operation that ended with {@code result}. */
  private static FinalAnswer answer(OperationResult result) {
    return result instanceof OperationResult.Success
        ? FinalAnswer.completed(result.response())
        : FinalAnswer.failed(result.response());
  }

  /** What the caller gets of an operation that ended with {@code result}. */
  private static Outcome ended(OperationResult result) {
    return result instanceof OperationResult.Success
        ? new Outcome.Executed(result.response())
        : new Outcome.Rejected(result.response());
  }
}
