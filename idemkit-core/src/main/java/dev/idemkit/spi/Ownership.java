package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.ScopedKey;
import java.time.Instant;
import java.util.Objects;

/**
 * Proof that the holder owns a record: its fencing token at the moment it claimed. Every write of
 * an owner names it, and a store applies the write only while the token is still current.
 */
public record Ownership(ScopedKey id, long fencingToken, Instant lockedUntil) {
  public Ownership {
    Objects.requireNonNull(id);
    Objects.requireNonNull(lockedUntil);
  }

  /** The ownership a freshly claimed or taken-over record confers. */
  public static Ownership of(IdempotencyRecord record) {
    return new Ownership(record.id(), record.fencingToken(), record.lockedUntil());
  }
}
