package dev.idemkit.internal;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.CallResult;
import dev.idemkit.ClaimWaitTimeoutException;
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
import dev.idemkit.OperatorResolution;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.QuotaExceededException;
import dev.idemkit.RecordState;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.RecordExistsException;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreCapabilities;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** The engine behind {@link Idempotency}. Not API. */
public final class IdempotencyEngine implements Idempotency {

  private static final System.Logger LOG = System.getLogger(IdempotencyEngine.class.getName());

  /**
   * How often one request re-reads after losing a race for the same record. Each lost race means
   * another request changed the record in between, so a handful is plenty.
   */
  private static final int MAX_RACES = 16;

  /**
   * The least Retry-After of a retry whose record awaits an operator: only an operator's resolution
   * settles it, which takes minutes or hours, so a client asking every few seconds only adds load
   * (the same wait as a live-records quota refusal that escalated records alone cause).
   */
  static final Duration AWAITING_OPERATOR_RETRY_AFTER = Duration.ofSeconds(60);

  private final IdempotencyStore store;
  private final IdempotencyConfig config;
  private final IdempotencyListener listener;
  private final LongSupplier ticker;

  /** How long each operation recently took, for the Retry-After of in-progress answers. */
  private final RecentDurations durations = new RecentDurations();

  /** How often each operation's requests were replays: whether to read the record first. */
  private final ReplayRates replays = new ReplayRates();

  /**
   * The quotas' admissions, decided in memory; shared with other instances by {@link #syncQuotas}.
   */
  private final QuotaGate quotaGate;

  /** The store's recovery administration when the config has a recovery schedule, else null. */
  private final RecoveryAdministration recovery;

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
    long started = System.nanoTime();
    String name = request.id().operation();
    Outcome outcome;
    try {
      outcome = replays.readFirst(name) ? answerFromRecord(request) : null;
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
   * #finishedAnswer}, which {@link #acquire} asks too).
   */
  private Outcome answerFromRecord(IdempotentRequest request) {
    Optional<Snapshot> seen = store.peek(request.id());
    if (seen.isEmpty() || seen.get().record().isExpiredAt(seen.get().now())) {
      return null;
    }
    IdempotencyRecord record = seen.get().record();
    return record.state().isReplayable() ? finishedAnswer(record, request).orElse(null) : null;
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

  /**
   * What an unexpired finished record ({@link RecordState#isReplayable()}) answers this request: a
   * mismatch when the request is not the one recorded, else a replay of the stored response; empty
   * when the record has no stored response.
   */
  private static Optional<Outcome> finishedAnswer(
      IdempotencyRecord record, IdempotentRequest request) {
    if (!request.sameCommandAs(record.fingerprint())) {
      return Optional.of(new Outcome.Mismatch());
    }
    return record
        .storedResponse()
        .<Outcome>map(response -> new Outcome.Replayed(response, record.state()));
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
    Outcome outcome = new PhaseRun<>(id, acquired.claim(), operation, false).resume();
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
            Context ctx = new Context(id, false, Optional.empty());
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
            Acquired acquired = acquire(tx, request, mayMakeRecord);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            Claim claim = acquired.claim();
            Context ctx = new Context(request.id(), claim.resumed(), Optional.empty());
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
            Acquired acquired = acquire(tx, request, mayMakeRecord);
            if (acquired.answer() != null) {
              return acquired.answer();
            }
            store.finish(tx, acquired.claim().ownership(), RecordState.FAILED_REPLAYABLE, response);
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
                Acquired acquired = acquire(tx, request, mayMakeRecord);
                if (acquired.answer() != null) {
                  return new Progress.Ended(acquired.answer());
                }
                PhaseRun<?> run = new PhaseRun<>(id, acquired.claim(), operation, true);
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
    PhaseRun<?> run = new PhaseRun<>(request, operation);
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
   * One owner's run through the phases, from the recovery point to the end. Its fields describe
   * what is durable once the transaction that changed them commits; a transaction that rolls back
   * ends the run, so they are never read after one.
   */
  private final class PhaseRun<D> {
    private final ScopedKey id;
    private final PhasedOperation<D> operation;
    private final Context ctx;
    private final boolean effectBeforeThisRun;
    private Ownership owner;

    /**
     * The run took over a record whose call may have been made: learn what it did before any call
     * ({@link #learnAfterTakeover}).
     */
    private boolean lookUpFirst;

    /** When the current lease was last set (claim, takeover or renewal), on the engine's ticker. */
    private long leaseSetAt;

    /**
     * A client's request runs this (not a recovery worker, which spaces out its own attempts): an
     * attempt of its that leaves the outcome unknown follows the record's recovery schedule.
     */
    private final boolean forRequest;

    /** Recovery attempts counted on the record when this run took it. */
    private final int attemptsBefore;

    private String recoveryPoint;
    private String pendingExternal;
    private D data;

    /**
     * The request whose record this run inserts in its first transaction ({@link
     * #executePhasedRecordLast}); null once that transaction wrote it, and for a run that began by
     * claiming or taking over the record (then {@link #owner} is set from the start).
     */
    private IdempotentRequest unwritten;

    /** A request's run whose record does not exist yet: its first transaction inserts it. */
    PhaseRun(IdempotentRequest request, PhasedOperation<D> operation) {
      this(request.id(), Claim.UNWRITTEN, operation, true);
      this.unwritten = request;
    }

    PhaseRun(ScopedKey id, Claim claim, PhasedOperation<D> operation, boolean forRequest) {
      this.id = id;
      this.forRequest = forRequest;
      this.attemptsBefore = claim.recoveryAttempts();
      this.operation = operation;
      this.owner = claim.ownership();
      this.leaseSetAt = ticker.getAsLong();
      this.recoveryPoint = claim.recoveryPoint();
      this.pendingExternal = claim.pendingExternal();
      Map<String, String> stored = new HashMap<>(claim.data());
      Optional<OperatorResolution> verdict = OperatorResolution.in(stored);
      stored.keySet().removeIf(OperatorResolution::isVerdictKey);
      this.data = operation.data().read(stored);
      this.ctx = new Context(id, claim.resumed(), verdict);
      this.effectBeforeThisRun = pendingExternal != null || hasExternalEffectBy(recoveryPoint);
      this.lookUpFirst = pendingExternal != null;
    }

    /**
     * Goes on after a takeover that committed on its own (a recovery worker's, or a request's that
     * found an external effect before it).
     */
    Outcome resume() {
      if (pendingExternal == null) {
        Progress progress;
        try {
          progress = inTransaction(this::localPhases);
        } catch (LostOwnershipException lost) {
          listener.onLostOwnership(id);
          throw lost;
        } catch (RuntimeException e) {
          // After an effect the operation cannot be failed retryably, nor left in progress for
          // the next owner to fail the same way on every pass: the attempt is counted as one at
          // an unfinished outcome, on the recovery schedule, and the last one escalates.
          throw failed(
              effectBeforeThisRun
                  ? RecordState.UNKNOWN_REQUIRES_RECOVERY
                  : RecordState.FAILED_RETRYABLE,
              unwrap(e));
        }
        return progress.then(this);
      }
      return fromCall();
    }

    /** Where a rollback of this run's first transaction leaves the record. */
    RecordState stateBeforeThisRun() {
      return effectBeforeThisRun ? RecordState.IN_PROGRESS : RecordState.FAILED_RETRYABLE;
    }

    /**
     * Runs the local phases after the recovery point in {@code tx}, up to and including the next
     * call's marker or the completion: the operation {@link Progress.Ended ended}, or {@link
     * Progress#CALL} is next ({@link #pendingExternal} names it once {@code tx} commits).
     */
    Progress localPhases(StoreTransaction tx) throws Exception {
      List<PhasedOperation.Phase<D>> phases = operation.phases();
      ctx.tx = tx;
      try {
        for (int i = indexAfter(recoveryPoint); i < phases.size(); i++) {
          PhasedOperation.Phase<D> phase = phases.get(i);
          PhasedOperation.LocalStep<D> step =
              phase instanceof PhasedOperation.Local<D> local
                  ? local.step()
                  : ((PhasedOperation.External<D>) phase).beforeCall();
          Step<D> next = step.run(ctx, data);
          if (next instanceof Step.Answer<D> answer) {
            return new Progress.Ended(end(tx, answer.result()));
          }
          data = ((Step.Next<D>) next).data();
          if (phase instanceof PhasedOperation.External<D> external) {
            // Durably say the call may be under way before making it.
            mark(tx, external.name());
            pendingExternal = external.name();
            return Progress.CALL;
          }
          recoveryPoint = phase.name();
        }
        return new Progress.Ended(end(tx, operation.completion().complete(ctx, data)));
      } finally {
        ctx.tx = null;
      }
    }

    /**
     * The call's marker: the record inserted as it stands now, when this run's first transaction
     * writes it; else the owner's fenced advance.
     */
    private void mark(StoreTransaction tx, String call) {
      if (unwritten == null) {
        store.advance(tx, owner, recoveryPoint, call, written());
        return;
      }
      owner =
          store.insertInProgress(
              tx,
              id,
              unwritten.fingerprint(),
              config.lease(),
              unwritten.ttl(),
              recoveryPoint,
              call,
              written());
      leaseSetAt = ticker.getAsLong();
      unwritten = null;
    }

    /**
     * The operation ends with {@code result}: the record inserted finished, when this run's first
     * transaction writes it; else the owner's completion.
     */
    private Outcome end(StoreTransaction tx, OperationResult result) {
      if (unwritten == null) {
        return finish(tx, owner, result);
      }
      Outcome done = insertFinished(tx, unwritten, result);
      unwritten = null;
      return done;
    }

    /**
     * Makes the pending call (or, for a takeover, learns what the earlier one did), records what it
     * said, then goes on: to the next call, if the phases after it lead to one.
     */
    Outcome fromCall() {
      Progress progress;
      try {
        Optional<PhasedOperation.External<D>> declared = pendingPhase();
        if (declared.isEmpty()) {
          return undeclaredPendingPhase();
        }
        PhasedOperation.External<D> phase = declared.get();
        CallResult<D> result;
        if (lookUpFirst) {
          lookUpFirst = false;
          result = learnAfterTakeover(phase);
        } else {
          result = callOrLookUp(phase, phase.call(), false);
        }
        progress = result.accept(new Recording(phase));
      } catch (LostOwnershipException lost) {
        listener.onLostOwnership(id);
        throw lost;
      }
      return progress.then(this);
    }

    /**
     * This run took over a record whose marker says the call may have been made, and makes no call
     * blindly. With a lookup, the far side is asked first, and the call is made only if the lookup
     * says it never happened (under the same key). Without one, the phase declares that the far
     * side deduplicates by key (the {@link PhasedOperation.External} record allows no phase with
     * neither), so the call is made again and answers with the first call's result; it is this
     * run's way of learning, so an operator's verdict reaches it as it would a lookup.
     */
    private CallResult<D> learnAfterTakeover(PhasedOperation.External<D> phase) {
      if (phase.lookup().isEmpty()) {
        return callOrLookUp(phase, phase.call(), true);
      }
      CallResult<D> found = callOrLookUp(phase, phase.lookup().get(), true);
      return found instanceof CallResult.NotApplied<D>
          ? callOrLookUp(phase, phase.call(), false) // never happened: make it now, same key
          : found;
    }

    /**
     * A takeover found a call under way whose phase this operation does not declare: the record was
     * written by an older definition whose phase was renamed or removed. Nothing here can learn
     * what the call did, and no other phase's call may stand in for it, so no call is made: the
     * outcome stays unknown, on the recovery schedule and then with an operator, until a definition
     * that declares the phase again (with its lookup) goes on from it.
     */
    private Outcome undeclaredPendingPhase() {
      LOG.log(
          System.Logger.Level.WARNING,
          "{0}: the call of external phase {1} may have been made, but this operation declares no"
              + " phase {1} to learn what it did (phases: {2}); no call is made and the outcome"
              + " stays unknown. Deploy a definition that declares {1} with its lookup.",
          id,
          pendingExternal,
          operation.phases().stream().map(PhasedOperation.Phase::name).toList());
      return unknown();
    }

    /**
     * A call or lookup; whatever it throws means its outcome is unknown. {@code learning}: it
     * learns what an earlier call did, and sees an operator's verdict.
     */
    private CallResult<D> callOrLookUp(
        PhasedOperation.External<D> phase, PhasedOperation.Call<D> call, boolean learning) {
      ctx.lookingUp = learning;
      listener.onCallStarting(id, phase.name());
      CallResult<D> result;
      try {
        result = call.call(ctx, data);
        Objects.requireNonNull(result, "a call returned null instead of a CallResult");
      } catch (Exception e) {
        result = CallResult.unknown(e.toString());
      } finally {
        ctx.lookingUp = false;
      }
      listener.onCallReturned(id, phase.name(), result);
      return result;
    }

    /** Commits what a call said, each case its own way. */
    private final class Recording implements CallResult.Visitor<D, Progress> {
      private final PhasedOperation.External<D> phase;

      Recording(PhasedOperation.External<D> phase) {
        this.phase = phase;
      }

      /**
       * The step after the call and the local phases after it, with the next marker or the
       * completion, in one transaction.
       */
      @Override
      public Progress applied(CallResult.Applied<D> applied) {
        data = applied.data();
        try {
          return inTransaction(
              tx -> {
                ctx.tx = tx;
                Step<D> next;
                try {
                  next = phase.afterCall().run(ctx, data);
                } finally {
                  ctx.tx = null;
                }
                if (next instanceof Step.Answer<D> answer) {
                  return new Progress.Ended(finish(tx, owner, answer.result()));
                }
                data = ((Step.Next<D>) next).data();
                recoveryPoint = phase.name();
                pendingExternal = null;
                return localPhases(tx);
              });
        } catch (LostOwnershipException | OperationFailedException e) {
          throw e;
        } catch (RuntimeException e) {
          // The call's result was not recorded; the record still says the call may be under way,
          // so the next attempt asks the far side again and goes on. It is an attempt at an
          // unknown outcome, on the recovery schedule: a step that fails every time (a bug, a
          // constraint) ends with an operator, not in a loop of lookups.
          pendingExternal = phase.name();
          throw failed(RecordState.UNKNOWN_REQUIRES_RECOVERY, unwrap(e));
        }
      }

      /** A refusal from the far side: stored, replayed to every retry. */
      @Override
      public Progress rejected(CallResult.Rejected<D> rejected) {
        return new Progress.Ended(
            inTransaction(tx -> finish(tx, owner, OperationResult.rejected(rejected.answer()))));
      }

      /**
       * Nothing happened on the far side: the record goes back to before the call, and the request
       * ends without an answer ({@link OperationFailedException}): a retry runs the call again.
       */
      @Override
      public Progress notApplied(CallResult.NotApplied<D> notApplied) {
        RecordState left =
            hasExternalEffectBy(recoveryPoint)
                ? RecordState.IN_PROGRESS
                : RecordState.FAILED_RETRYABLE;
        inTransaction(
            tx -> {
              store.advance(tx, owner, recoveryPoint, null, written());
              store.suspend(tx, owner, left);
              return null;
            });
        pendingExternal = null;
        listener.onFailure(
            id, left, new IllegalStateException("not applied: " + notApplied.reason()));
        throw new OperationFailedException(
            "External phase "
                + phase.name()
                + " of "
                + id
                + " was not applied ("
                + notApplied.reason()
                + "); a retry runs it again",
            left,
            null);
      }

      /** The call's outcome is unknown: the record waits for recovery. */
      @Override
      public Progress unknown(CallResult.Unknown<D> unknown) {
        return new Progress.Ended(PhaseRun.this.unknown());
      }
    }

    /** The outcome of the pending call is unknown: the record waits for recovery. */
    private Outcome.OutcomePending unknown() {
      inTransaction(
          tx -> {
            store.suspend(tx, owner, RecordState.UNKNOWN_REQUIRES_RECOVERY);
            return null;
          });
      listener.onUnknownState(id);
      return retryAfterUnknown();
    }

    /**
     * The outcome is still unknown after this run's attempt (the record now counts {@code
     * attemptsBefore + 1}). A request's recovery attempt, one after the first request's, follows
     * the record's schedule as a worker's would: the next attempt waits, or the record is left to
     * an operator, and the caller is told to wait as long (an operator's resolution: that it awaits
     * one, and at least {@link #AWAITING_OPERATOR_RETRY_AFTER}). Without a schedule, or on the
     * first request (whose recovery is due at once, unless the schedule allows one attempt only),
     * the configured {@code outcomePendingRetryAfter}.
     */
    private Outcome.OutcomePending retryAfterUnknown() {
      RecoverySchedule schedule = config.recoverySchedule();
      int attempts = attemptsBefore + 1;
      // The first request's attempt is due for recovery at once, unless it was the last one
      // allowed (a limit of one attempt): then it is escalated here like any later attempt.
      if (!forRequest || schedule == null || (attempts < 2 && attempts < schedule.maxAttempts())) {
        return new Outcome.OutcomePending(config.outcomePendingRetryAfter());
      }
      RecoveryBackoff done;
      try {
        done =
            recovery.backOffRecovery(
                id, schedule.firstDelay(), schedule.maxDelay(), schedule.maxAttempts());
      } catch (RuntimeException e) {
        // The outcome is as pending as before; the recovery worker spaces the next attempt out.
        LOG.log(System.Logger.Level.DEBUG, "Could not space out the next recovery of " + id, e);
        return new Outcome.OutcomePending(config.outcomePendingRetryAfter());
      }
      if (done == RecoveryBackoff.ESCALATED) {
        listener.onEscalated(id);
        LOG.log(
            System.Logger.Level.WARNING,
            "{0}: {1} after {2} recovery attempts; automatic recovery stopped. An operator must"
                + " resolve it (applied, with the external reference, or not applied).",
            id,
            pendingExternal != null
                ? "the outcome of external step " + pendingExternal + " is still unknown"
                : "the local phase after " + recoveryPoint + " still fails",
            schedule.maxAttempts());
      }
      Duration wait = schedule.delayAfter(attempts);
      Duration seconds = Duration.ofSeconds(Math.max(1, (wait.toMillis() + 999) / 1000));
      return done == RecoveryBackoff.ESCALATED || done == RecoveryBackoff.ALREADY_ESCALATED
          ? awaitingOperator(seconds)
          : new Outcome.OutcomePending(seconds);
    }

    private OperationFailedException failed(RecordState left, Throwable cause) {
      boolean suspended = false;
      try {
        inTransaction(
            tx -> {
              store.suspend(tx, owner, left);
              return null;
            });
        suspended = true;
      } catch (LostOwnershipException lost) {
        listener.onLostOwnership(id);
        throw lost;
      } catch (RuntimeException suspendFailed) {
        cause.addSuppressed(suspendFailed);
      }
      if (suspended && left == RecordState.UNKNOWN_REQUIRES_RECOVERY) {
        retryAfterUnknown(); // a request's attempt spaces out the next one, or escalates
      }
      listener.onFailure(id, left, cause);
      String next =
          left == RecordState.FAILED_RETRYABLE
              ? "before any external effect; a retry runs it again"
              : pendingExternal != null
                  ? "after an external call; a retry asks the far side and goes on"
                  : "in a local phase after an external effect; a retry goes on from phase "
                      + recoveryPoint;
      return new OperationFailedException("Operation " + id + " failed " + next, left, cause);
    }

    /**
     * The external phase whose call is pending; empty when this operation declares none of that
     * name (only a record written by an older definition: this run's own markers name its phases).
     */
    private Optional<PhasedOperation.External<D>> pendingPhase() {
      for (PhasedOperation.Phase<D> phase : operation.phases()) {
        if (phase instanceof PhasedOperation.External<D> external
            && external.name().equals(pendingExternal)) {
          return Optional.of(external);
        }
      }
      return Optional.empty();
    }

    /** The data to store: the user's values, without a verdict once the lookup has run. */
    private Map<String, String> written() {
      return operation.data().write(data);
    }

    /** The index of the first phase after {@code point} ({@code null}: before any). */
    private int indexAfter(String point) {
      if (point == null) {
        return 0;
      }
      List<PhasedOperation.Phase<D>> phases = operation.phases();
      for (int i = 0; i < phases.size(); i++) {
        if (phases.get(i).name().equals(point)) {
          return i + 1;
        }
      }
      throw new IllegalStateException(
          "Recovery point '"
              + point
              + "' names no phase of this operation "
              + phases.stream().map(PhasedOperation.Phase::name).toList());
    }

    /** True if some external phase lies at or before {@code point}: an effect happened. */
    private boolean hasExternalEffectBy(String point) {
      int end = indexAfter(point);
      for (int i = 0; i < end; i++) {
        if (operation.phases().get(i) instanceof PhasedOperation.External) {
          return true;
        }
      }
      return false;
    }

    /**
     * One transaction of this owner. Every record write in it is conditional on the owner's fencing
     * token: if another owner took over meanwhile, that write fails and the whole transaction,
     * business rows included, rolls back. The lease is renewed first only once a third of it has
     * passed (measured as a duration on the engine's ticker, never compared with the database's
     * clock): a renewal is a round trip, and fencing, not the lease, is what keeps two owners from
     * both writing.
     */
    private <T> T inTransaction(Work<T> work) {
      try {
        return store.inTransaction(
            tx -> {
              long now = ticker.getAsLong();
              if (now - leaseSetAt > config.lease().toNanos() / 3) {
                owner = store.renew(tx, owner, config.lease());
                leaseSetAt = now;
              }
              return work.run(tx);
            });
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new PhaseException(e);
      }
    }
  }

  private static Throwable unwrap(RuntimeException e) {
    return e instanceof PhaseException ? e.getCause() : e;
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
    return store.peek(id).filter(seen -> !seen.record().isExpiredAt(seen.now())).isPresent();
  }

  @FunctionalInterface
  private interface Work<T> {
    T run(StoreTransaction tx) throws Exception;
  }

  /** Carries a checked exception out of a transaction; unwrapped by callers that care. */
  private static final class PhaseException extends RuntimeException {
    PhaseException(Exception cause) {
      super(cause);
    }
  }

  /** {@code request}'s record inserted finished with {@code result}, as {@code tx}'s last write. */
  private Outcome insertFinished(
      StoreTransaction tx, IdempotentRequest request, OperationResult result) {
    boolean success = result instanceof OperationResult.Success;
    store.insertFinished(
        tx,
        request.id(),
        request.fingerprint(),
        success ? RecordState.COMPLETED : RecordState.FAILED_REPLAYABLE,
        result.response(),
        request.ttl());
    return success
        ? new Outcome.Executed(result.response())
        : new Outcome.Rejected(result.response());
  }

  private Outcome finish(StoreTransaction tx, Ownership owner, OperationResult result) {
    if (result instanceof OperationResult.Success) {
      store.finish(tx, owner, RecordState.COMPLETED, result.response());
      return new Outcome.Executed(result.response());
    }
    store.finish(tx, owner, RecordState.FAILED_REPLAYABLE, result.response());
    return new Outcome.Rejected(result.response());
  }

  /**
   * Where a phased run stands after one of its transactions, and so what comes next: never a null
   * for "go on", never an exception to steer.
   */
  private sealed interface Progress {

    /** A call's marker was written: the call is next, after the commit. */
    Progress CALL = new CallNext();

    /**
     * A takeover found an effect before it and commits alone: the run goes on after that commit
     * ({@link PhaseRun#resume}).
     */
    Progress RESUME = new Resume();

    /** What the run does next; {@code run} is null only when the progress is {@link Ended}. */
    Outcome then(PhaseRun<?> run);

    /** Whether the record stays live after this transaction's commit (a call is pending). */
    boolean leavesTheRecordLive();

    /** The operation ended with {@code outcome}, or the request got it without running. */
    record Ended(Outcome outcome) implements Progress {
      @Override
      public Outcome then(PhaseRun<?> run) {
        return outcome;
      }

      @Override
      public boolean leavesTheRecordLive() {
        return false;
      }
    }

    /** {@link #CALL}. */
    final class CallNext implements Progress {
      @Override
      public Outcome then(PhaseRun<?> run) {
        return run.fromCall();
      }

      @Override
      public boolean leavesTheRecordLive() {
        return true;
      }
    }

    /** {@link #RESUME}. */
    final class Resume implements Progress {
      @Override
      public Outcome then(PhaseRun<?> run) {
        return run.resume();
      }

      @Override
      public boolean leavesTheRecordLive() {
        return true;
      }
    }
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

  /**
   * {@link #executeExisting}: the key has no record that answers, and the claim's transaction is
   * rolled back so that none is made. Thrown and caught inside the engine; no stack trace.
   */
  private static final class NoRecord extends RuntimeException {
    private static final NoRecord INSTANCE = new NoRecord();

    private NoRecord() {
      super("no record answers for the key", null, false, false);
    }
  }

  private record Claim(
      Ownership ownership,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> data,
      boolean resumed,
      int recoveryAttempts) {

    /** A record not written yet: a record-last run's, before its first commit inserts it. */
    static final Claim UNWRITTEN = new Claim(null, null, null, Map.of(), false, 0);

    static Claim fresh(IdempotencyRecord record) {
      return new Claim(Ownership.of(record), null, null, new HashMap<>(), false, 0);
    }

    static Claim resumed(IdempotencyRecord record) {
      return new Claim(
          Ownership.of(record),
          record.recoveryPoint(),
          record.pendingExternal(),
          new HashMap<>(record.recoveryData()),
          true,
          record.recoveryAttempts());
    }
  }

  /**
   * Decides, by the contract's table, what the existing record means for this request. Every change
   * of owner is one conditional write in the store; losing it means someone else changed the
   * record, so the decision is taken again on what is there now.
   *
   * <p>Without {@code mayMakeRecord} ({@link #executeExisting}) a key whose claim inserted a new
   * record, or that found only an expired one, throws {@link NoRecord}: the caller's transaction
   * rolls the insert back. The claim is still the insert, not a read: a concurrent claim of the key
   * not yet committed (a local operation runs in its claim's transaction) makes it wait for that
   * transaction's end, as {@link #execute} waits, so a record being made is found, never taken for
   * none.
   */
  private Acquired acquire(StoreTransaction tx, IdempotentRequest request, boolean mayMakeRecord) {
    ScopedKey id = request.id();
    Fingerprint fingerprint = request.fingerprint();
    for (int race = 0; race < MAX_RACES; race++) {
      ClaimAttempt attempt = store.claim(tx, id, fingerprint, config.lease(), request.ttl());
      if (attempt instanceof ClaimAttempt.Inserted inserted) {
        if (!mayMakeRecord) {
          throw NoRecord.INSTANCE;
        }
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
        if (!mayMakeRecord) {
          throw NoRecord.INSTANCE;
        }
        Optional<IdempotencyRecord> replaced =
            takeOver(tx, snapshot, Takeover.REPLACE_EXPIRED, request);
        if (replaced.isPresent()) {
          listener.onExpiredRetry(id);
          return Acquired.owned(Claim.fresh(replaced.get()));
        }
        continue;
      }
      // A finished record answers as it does on the read-first path; any other record refuses a
      // different request before its state is looked at.
      if (record.state().isReplayable()) {
        return Acquired.answer(
            finishedAnswer(record, request)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            id + " is " + record.state() + " but has no response")));
      }
      if (!request.sameCommandAs(record.fingerprint())) {
        return Acquired.answer(new Outcome.Mismatch());
      }
      Takeover kind;
      switch (record.state()) {
        case FAILED_RETRYABLE -> kind = Takeover.RECLAIM_RETRYABLE;
        case IN_PROGRESS -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(
                new Outcome.InProgress(
                    durations.retryAfter(
                        id.operation(),
                        Duration.between(now, record.lockedUntil()),
                        Duration.between(record.updatedAt(), now))));
          }
          kind = Takeover.RESUME_ABANDONED;
        }
        case UNKNOWN_REQUIRES_RECOVERY -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(
                record.awaitsOperator()
                    ? awaitingOperator(retryAfter(record, now))
                    : new Outcome.OutcomePending(retryAfter(record, now)));
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

  /**
   * The answer for a record automatic recovery gave up on: it waits for an operator, so the retry
   * is told to wait at least {@link #AWAITING_OPERATOR_RETRY_AFTER}.
   */
  private static Outcome.OutcomePending awaitingOperator(Duration untilNextAttempt) {
    return new Outcome.OutcomePending(
        untilNextAttempt.compareTo(AWAITING_OPERATOR_RETRY_AFTER) > 0
            ? untilNextAttempt
            : AWAITING_OPERATOR_RETRY_AFTER,
        Outcome.OutcomePending.Awaiting.OPERATOR);
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
    private final boolean resumed;
    private final Optional<OperatorResolution> verdict;
    private StoreTransaction tx;
    private boolean lookingUp;

    Context(ScopedKey id, boolean resumed, Optional<OperatorResolution> verdict) {
      this.id = id;
      this.resumed = resumed;
      this.verdict = verdict;
    }

    @Override
    public ScopedKey id() {
      return id;
    }

    @Override
    public boolean resumed() {
      return resumed;
    }

    @Override
    public Optional<OperatorResolution> operatorResolution() {
      return lookingUp ? verdict : Optional.empty();
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
