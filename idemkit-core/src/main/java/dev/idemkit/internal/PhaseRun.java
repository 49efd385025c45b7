package dev.idemkit.internal;

import dev.idemkit.CallResult;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.StoreTransaction;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One owner's run through the phases, from the recovery point to the end. Its fields describe what
 * is durable once the transaction that changed them commits; a transaction that rolls back ends the
 * run, so they are never read after one.
 */
final class PhaseRun<D> {

  /** The engine's logger: the run logs under the engine's name. */
  private static final System.Logger LOG = System.getLogger(IdempotencyEngine.class.getName());

  /** The engine whose store, config, listener, ticker and recovery administration the run uses. */
  private final IdempotencyEngine engine;

  private final ScopedKey id;
  private final PhasedOperation<D> operation;
  private final RunContext ctx;
  final boolean effectBeforeThisRun;
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
   * IdempotencyEngine#executePhasedRecordLast}); null once that transaction wrote it, and for a run
   * that began by claiming or taking over the record (then {@link #owner} is set from the start).
   */
  private IdempotentRequest unwritten;

  /** A request's run whose record does not exist yet: its first transaction inserts it. */
  PhaseRun(IdempotencyEngine engine, IdempotentRequest request, PhasedOperation<D> operation) {
    this(engine, request.id(), Claim.UNWRITTEN, operation, true);
    this.unwritten = request;
  }

  PhaseRun(
      IdempotencyEngine engine,
      ScopedKey id,
      Claim claim,
      PhasedOperation<D> operation,
      boolean forRequest) {
    this.engine = engine;
    this.id = id;
    this.forRequest = forRequest;
    this.attemptsBefore = claim.recoveryAttempts();
    this.operation = operation;
    this.owner = claim.ownership();
    this.leaseSetAt = engine.ticker.getAsLong();
    this.recoveryPoint = claim.recoveryPoint();
    this.pendingExternal = claim.pendingExternal();
    Map<String, String> stored = new HashMap<>(claim.data());
    Optional<OperatorResolution> verdict = OperatorResolution.in(stored);
    stored.keySet().removeIf(OperatorResolution::isVerdictKey);
    this.data = operation.data().read(stored);
    this.ctx = new RunContext(id, claim.resumed(), verdict);
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
        engine.listener.onLostOwnership(id);
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
      engine.store.advance(tx, owner, checkpoint(call));
      return;
    }
    owner =
        engine.store.insertInProgress(
            tx, NewRecord.of(unwritten), engine.config.lease(), checkpoint(call));
    leaseSetAt = engine.ticker.getAsLong();
    unwritten = null;
  }

  /**
   * The operation ends with {@code result}: the record inserted finished, when this run's first
   * transaction writes it; else the owner's completion.
   */
  private Outcome end(StoreTransaction tx, OperationResult result) {
    if (unwritten == null) {
      return engine.finish(tx, owner, result);
    }
    Outcome done = engine.insertFinished(tx, unwritten, result);
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
      engine.listener.onLostOwnership(id);
      throw lost;
    }
    return progress.then(this);
  }

  /**
   * This run took over a record whose marker says the call may have been made, and makes no call
   * blindly. With a lookup, the far side is asked first, and the call is made only if the lookup
   * says it never happened (under the same key). Without one, the phase declares that the far side
   * deduplicates by key (the {@link PhasedOperation.External} record allows no phase with neither),
   * so the call is made again and answers with the first call's result; it is this run's way of
   * learning, so an operator's verdict reaches it as it would a lookup.
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
   * written by an older definition whose phase was renamed or removed. Nothing here can learn what
   * the call did, and no other phase's call may stand in for it, so no call is made: the outcome
   * stays unknown, on the recovery schedule and then with an operator, until a definition that
   * declares the phase again (with its lookup) goes on from it.
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
   * A call or lookup; whatever it throws means its outcome is unknown. {@code learning}: it learns
   * what an earlier call did, and sees an operator's verdict.
   */
  private CallResult<D> callOrLookUp(
      PhasedOperation.External<D> phase, PhasedOperation.Call<D> call, boolean learning) {
    ctx.lookingUp = learning;
    engine.listener.onCallStarting(id, phase.name());
    CallResult<D> result;
    try {
      result = call.call(ctx, data);
      Objects.requireNonNull(result, "a call returned null instead of a CallResult");
    } catch (Exception e) {
      result = CallResult.unknown(e.toString());
    } finally {
      ctx.lookingUp = false;
    }
    engine.listener.onCallReturned(id, phase.name(), result);
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
                return new Progress.Ended(engine.finish(tx, owner, answer.result()));
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
          inTransaction(
              tx -> engine.finish(tx, owner, OperationResult.rejected(rejected.answer()))));
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
            engine.store.advance(tx, owner, checkpoint(null));
            engine.store.suspend(tx, owner, left);
            return null;
          });
      pendingExternal = null;
      engine.listener.onFailure(
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
          engine.store.suspend(tx, owner, RecordState.UNKNOWN_REQUIRES_RECOVERY);
          return null;
        });
    engine.listener.onUnknownState(id);
    return retryAfterUnknown();
  }

  /**
   * The outcome is still unknown after this run's attempt (the record now counts {@code
   * attemptsBefore + 1}). A request's recovery attempt, one after the first request's, follows the
   * record's schedule as a worker's would: the next attempt waits, or the record is left to an
   * operator, and the caller is told to wait as long (an operator's resolution: that it awaits one,
   * and at least {@link RecordAcquisition#AWAITING_OPERATOR_RETRY_AFTER}). Without a schedule, or
   * on the first request (whose recovery is due at once, unless the schedule allows one attempt
   * only), the configured {@code outcomePendingRetryAfter}.
   */
  private Outcome.OutcomePending retryAfterUnknown() {
    RecoverySchedule schedule = engine.config.recoverySchedule();
    int attempts = attemptsBefore + 1;
    // The first request's attempt is due for recovery at once, unless it was the last one
    // allowed (a limit of one attempt): then it is escalated here like any later attempt.
    if (!forRequest || schedule == null || (attempts < 2 && attempts < schedule.maxAttempts())) {
      return new Outcome.OutcomePending(engine.config.outcomePendingRetryAfter());
    }
    RecoveryBackoff done;
    try {
      done =
          engine.recovery.backOffRecovery(
              id, schedule.firstDelay(), schedule.maxDelay(), schedule.maxAttempts());
    } catch (RuntimeException e) {
      // The outcome is as pending as before; the recovery worker spaces the next attempt out.
      LOG.log(System.Logger.Level.DEBUG, "Could not space out the next recovery of " + id, e);
      return new Outcome.OutcomePending(engine.config.outcomePendingRetryAfter());
    }
    if (done == RecoveryBackoff.ESCALATED) {
      engine.listener.onEscalated(id);
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
        ? RecordAcquisition.awaitingOperator(seconds)
        : new Outcome.OutcomePending(seconds);
  }

  private OperationFailedException failed(RecordState left, Throwable cause) {
    boolean suspended = false;
    try {
      inTransaction(
          tx -> {
            engine.store.suspend(tx, owner, left);
            return null;
          });
      suspended = true;
    } catch (LostOwnershipException lost) {
      engine.listener.onLostOwnership(id);
      throw lost;
    } catch (RuntimeException suspendFailed) {
      cause.addSuppressed(suspendFailed);
    }
    if (suspended && left == RecordState.UNKNOWN_REQUIRES_RECOVERY) {
      retryAfterUnknown(); // a request's attempt spaces out the next one, or escalates
    }
    engine.listener.onFailure(id, left, cause);
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
   * The external phase whose call is pending; empty when this operation declares none of that name
   * (only a record written by an older definition: this run's own markers name its phases).
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

  /**
   * Where this run stands, with {@code call} (or null) named as possibly under way; its data the
   * user's values, without a verdict once the lookup has run.
   */
  private Checkpoint checkpoint(String call) {
    return new Checkpoint(recoveryPoint, call, operation.data().write(data));
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
      return engine.store.inTransaction(
          tx -> {
            long now = engine.ticker.getAsLong();
            if (now - leaseSetAt > engine.config.lease().toNanos() / 3) {
              owner = engine.store.renew(tx, owner, engine.config.lease());
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

  private static Throwable unwrap(RuntimeException e) {
    return e instanceof PhaseException ? e.getCause() : e;
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
}
