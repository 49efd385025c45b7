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
   * The insert did nothing: a record holds the key, and the store did not read it (it does not read
   * in the same write, or the record was not visible to that write's snapshot, having committed or
   * gone concurrently). The caller reads it.
   */
  record Raced() implements ClaimAttempt {}
}
