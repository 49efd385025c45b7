package dev.idemkit;

import java.util.Objects;

/**
 * What a local step of a {@link PhasedOperation} returns: go on to the next phase with this data,
 * or end the operation here with this answer (a card decline becomes a 402 right after the call).
 *
 * @param <D> the operation's phase data
 */
public sealed interface Step<D> {

  /** Go on: {@code data} is kept with the recovery point and handed to the next phase. */
  record Next<D>(D data) implements Step<D> {
    public Next {
      Objects.requireNonNull(data, "data");
    }
  }

  /**
   * End the operation with {@code result}, committed in this step's transaction: a success
   * completes the record, a rejection stores a replayable refusal (what the step wrote is kept).
   */
  record Answer<D>(OperationResult result) implements Step<D> {
    public Answer {
      Objects.requireNonNull(result, "result");
    }
  }

  static <D> Step<D> next(D data) {
    return new Next<>(data);
  }

  static <D> Step<D> answer(OperationResult result) {
    return new Answer<>(result);
  }
}
