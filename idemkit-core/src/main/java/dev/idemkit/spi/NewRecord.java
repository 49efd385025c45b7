package dev.idemkit.spi;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.ScopedKey;
import java.time.Duration;
import java.util.Objects;

/**
 * A record a write creates, as far as every such write agrees: the key, the fingerprint of the
 * request that makes it, and its window ({@code ttl}: the record expires that long after it is
 * created). What else the write sets (a lease, a recovery point, a final answer) is passed beside
 * it.
 */
public record NewRecord(ScopedKey id, Fingerprint fingerprint, Duration ttl) {
  public NewRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(ttl, "ttl");
  }

  /** The record {@code request} makes. */
  public static NewRecord of(IdempotentRequest request) {
    return new NewRecord(request.id(), request.fingerprint(), request.ttl());
  }
}
