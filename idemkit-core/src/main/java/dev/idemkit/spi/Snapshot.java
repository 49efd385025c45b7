package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import java.time.Instant;
import java.util.Objects;

/** A record as read, with the store clock's time of the read: decisions compare against it. */
public record Snapshot(IdempotencyRecord record, Instant now) {
  public Snapshot {
    Objects.requireNonNull(record);
    Objects.requireNonNull(now);
  }
}
