package dev.idemkit.spi;

import dev.idemkit.RecordState;
import dev.idemkit.StoredResponse;
import java.util.Objects;

/**
 * How an operation ends: {@code COMPLETED} or {@code FAILED_REPLAYABLE}, with the response every
 * retry gets. What {@link IdempotencyStore#finish} and {@link IdempotencyStore#insertFinished}
 * write.
 */
public record FinalAnswer(RecordState state, StoredResponse response) {
  public FinalAnswer {
    if (!Objects.requireNonNull(state, "state").isReplayable()) {
      throw new IllegalArgumentException(
          "An operation ends COMPLETED or FAILED_REPLAYABLE, not " + state);
    }
    Objects.requireNonNull(response, "response");
  }

  /** The operation completed with {@code response}. */
  public static FinalAnswer completed(StoredResponse response) {
    return new FinalAnswer(RecordState.COMPLETED, response);
  }

  /** The operation failed for good with {@code response}, which every retry replays. */
  public static FinalAnswer failed(StoredResponse response) {
    return new FinalAnswer(RecordState.FAILED_REPLAYABLE, response);
  }

  /** The same answer with {@code response} in place of its response (sealed, for instance). */
  public FinalAnswer withResponse(StoredResponse response) {
    return new FinalAnswer(state, response);
  }
}
