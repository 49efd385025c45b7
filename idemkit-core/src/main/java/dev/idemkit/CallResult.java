package dev.idemkit;

import java.util.Objects;

/**
 * What an external call, or the lookup that asks the far side about an earlier call, says happened.
 * The engine's failure policy follows from the kind (contract §5, docs/contract.md):
 *
 * <ul>
 *   <li>{@link Applied}: the effect happened; its data goes to the step after the call, which
 *       commits with the rest of the operation.
 *   <li>{@link NotApplied}: nothing happened on the far side, so calling again is safe. A lookup's
 *       {@code NotApplied} makes the call run (under the same derived key); a call's leaves the
 *       record for the client's retry.
 *   <li>{@link Rejected}: the far side refused for a business reason; the operation ends with
 *       {@code answer}, which every retry gets.
 *   <li>{@link Unknown}: the outcome is not known (a timeout, a lost answer); the record waits for
 *       recovery, which asks the far side with the lookup (or, for a phase declared {@link
 *       PhasedOperation.ExternalSteps#farSideDeduplicatesByKey()} without one, makes the call again
 *       under the same key). An exception thrown by a call or a lookup means the same.
 * </ul>
 *
 * @param <D> the operation's phase data
 */
public sealed interface CallResult<D> {

  /** The effect happened; {@code data} is the phase data with what the far side answered. */
  record Applied<D>(D data) implements CallResult<D> {
    @Override
    public <R> R accept(Visitor<D, R> visitor) {
      return visitor.applied(this);
    }

    public Applied {
      Objects.requireNonNull(data, "data");
    }
  }

  /** Nothing happened on the far side: running the call again is safe. */
  record NotApplied<D>(String reason) implements CallResult<D> {
    @Override
    public <R> R accept(Visitor<D, R> visitor) {
      return visitor.notApplied(this);
    }
  }

  /** A business refusal from the far side, stored and replayed as {@code answer}. */
  record Rejected<D>(StoredResponse answer) implements CallResult<D> {
    @Override
    public <R> R accept(Visitor<D, R> visitor) {
      return visitor.rejected(this);
    }

    public Rejected {
      Objects.requireNonNull(answer, "answer");
    }
  }

  /** The outcome is not known: recovery will ask the far side. */
  record Unknown<D>(String reason) implements CallResult<D> {
    @Override
    public <R> R accept(Visitor<D, R> visitor) {
      return visitor.unknown(this);
    }
  }

  /** Calls the {@code visitor}'s method for this case and answers what it answers. */
  <R> R accept(Visitor<D, R> visitor);

  /** One method per case of {@link CallResult}: what the engine (or a caller) does with each. */
  interface Visitor<D, R> {
    R applied(Applied<D> applied);

    R notApplied(NotApplied<D> notApplied);

    R rejected(Rejected<D> rejected);

    R unknown(Unknown<D> unknown);
  }

  static <D> CallResult<D> applied(D data) {
    return new Applied<>(data);
  }

  static <D> CallResult<D> notApplied(String reason) {
    return new NotApplied<>(reason);
  }

  static <D> CallResult<D> rejected(StoredResponse answer) {
    return new Rejected<>(answer);
  }

  static <D> CallResult<D> unknown(String reason) {
    return new Unknown<>(reason);
  }
}
