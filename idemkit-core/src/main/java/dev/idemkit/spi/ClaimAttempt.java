package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import java.util.Objects;

/** The result of trying to create a record for a scoped key. */
public sealed interface ClaimAttempt {

  /** The record was created: the caller owns it. */
  record Inserted(IdempotencyRecord record) implements ClaimAttempt {
    public Inserted {
      Objects.requireNonNull(record);
    }
  }

  /** A record exists; here it is. */
  record Found(Snapshot snapshot) implements ClaimAttempt {
    public Found {
      Objects.requireNonNull(snapshot);
    }
  }

  /**
   * The insert conflicted but the existing record was not visible to this statement (it committed
   * or was removed concurrently). The caller reads again.
   */
  record Raced() implements ClaimAttempt {}
}
