package dev.idemkit.internal;

import dev.idemkit.Outcome;

/**
 * Where a phased run stands after one of its transactions, and so what comes next: never a null for
 * "go on", never an exception to steer.
 */
sealed interface Progress {

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
