package dev.idemkit;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The answer to one idempotent request. Callers handle every case with {@link #accept} and a {@link
 * Visitor} (Java 17 has no switch over a sealed type's records): a new case is then a compile error
 * at every caller, never a silent fallback branch. Every answer the record holds or the contract
 * gives is a case here, never an exception or a flag. A request that ends without an answer throws
 * {@link OperationFailedException} instead: an unexpected failure, or an external call that said
 * {@link CallResult.NotApplied} (nothing happened on the far side, so there is nothing to answer
 * yet; the record is left for a retry to run the call again).
 */
public sealed interface Outcome {

  /** This request ran the operation, and it succeeded. */
  record Executed(StoredResponse response) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.executed(this);
    }

    public Executed {
      Objects.requireNonNull(response);
    }
  }

  /** This request ran the operation, and it ended in a business rejection that retries replay. */
  record Rejected(StoredResponse response) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.rejected(this);
    }

    public Rejected {
      Objects.requireNonNull(response);
    }
  }

  /**
   * An earlier request finished the operation; this is its stored answer.
   *
   * @param state {@link RecordState#COMPLETED} or {@link RecordState#FAILED_REPLAYABLE}
   */
  record Replayed(StoredResponse response, RecordState state) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.replayed(this);
    }

    public Replayed {
      Objects.requireNonNull(response);
      Objects.requireNonNull(state);
    }
  }

  /** Another owner is running the operation right now; retry after {@code retryAfter}. */
  record InProgress(Duration retryAfter) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.inProgress(this);
    }

    public InProgress {
      Objects.requireNonNull(retryAfter);
    }
  }

  /**
   * The key was used in this scope for a different command. Never replayed: the caller must use a
   * new key for a new command.
   */
  record Mismatch() implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.mismatch(this);
    }
  }

  /**
   * A downstream call's outcome is still unknown after trying to recover it (or the operation is
   * unfinished after an external effect); retry after {@code retryAfter}. Nothing will be executed
   * twice meanwhile.
   *
   * @param retryAfter how long the caller should wait before asking again
   * @param awaiting who is to settle the outcome: automatic recovery, or (once it gave up) an
   *     operator, which will not happen by itself soon
   */
  record OutcomePending(Duration retryAfter, Awaiting awaiting) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.outcomePending(this);
    }

    /** Who is to settle a pending outcome. */
    public enum Awaiting {
      /** Automatic recovery (the recovery worker, or a retry once the next attempt is due). */
      RECOVERY,
      /** An operator: automatic recovery gave up after its last attempt (escalated). */
      OPERATOR
    }

    public OutcomePending {
      Objects.requireNonNull(retryAfter);
      Objects.requireNonNull(awaiting);
    }

    /** An outcome automatic recovery is still working on. */
    public OutcomePending(Duration retryAfter) {
      this(retryAfter, Awaiting.RECOVERY);
    }

    /** Automatic recovery gave up: the outcome awaits an operator's resolution. */
    public boolean awaitsOperator() {
      return awaiting == Awaiting.OPERATOR;
    }
  }

  /**
   * A new key was refused: the tenant reached {@code quota} ({@code new_keys} per minute, or {@code
   * live_records} in progress or awaiting recovery). Nothing was stored; retry with the same key
   * after {@code retryAfter}.
   */
  record QuotaExceeded(String quota, int limit, Duration retryAfter) implements Outcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.quotaExceeded(this);
    }

    public QuotaExceeded {
      Objects.requireNonNull(quota);
      Objects.requireNonNull(retryAfter);
    }
  }

  /** Calls the {@code visitor}'s method for this case and answers what it answers. */
  <R> R accept(Visitor<R> visitor);

  /** One method per case of {@link Outcome}: what a caller does with each. */
  interface Visitor<R> {
    R executed(Executed executed);

    R rejected(Rejected rejected);

    R replayed(Replayed replayed);

    R inProgress(InProgress inProgress);

    R mismatch(Mismatch mismatch);

    R outcomePending(OutcomePending pending);

    R quotaExceeded(QuotaExceeded refused);
  }

  /**
   * Whether this request ran the operation to its end ({@link Executed} or {@link Rejected}): its
   * record is finished by this request, and how long it took says how long the operation takes.
   */
  default boolean ranToItsEnd() {
    return this instanceof Executed || this instanceof Rejected;
  }

  /** The response this outcome carries, for the cases that carry one. */
  default Optional<StoredResponse> storedResponse() {
    return accept(
        new Visitor<>() {
          @Override
          public Optional<StoredResponse> executed(Executed executed) {
            return Optional.of(executed.response());
          }

          @Override
          public Optional<StoredResponse> rejected(Rejected rejected) {
            return Optional.of(rejected.response());
          }

          @Override
          public Optional<StoredResponse> replayed(Replayed replayed) {
            return Optional.of(replayed.response());
          }

          @Override
          public Optional<StoredResponse> inProgress(InProgress inProgress) {
            return Optional.empty();
          }

          @Override
          public Optional<StoredResponse> mismatch(Mismatch mismatch) {
            return Optional.empty();
          }

          @Override
          public Optional<StoredResponse> outcomePending(OutcomePending pending) {
            return Optional.empty();
          }

          @Override
          public Optional<StoredResponse> quotaExceeded(QuotaExceeded refused) {
            return Optional.empty();
          }
        });
  }
}
