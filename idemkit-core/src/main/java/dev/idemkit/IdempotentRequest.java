package dev.idemkit;

import java.time.Duration;
import java.util.Objects;

/**
 * One request to run an operation idempotently.
 *
 * @param id the scoped key
 * @param fingerprint the fingerprint of the canonical command
 * @param ttl how long the record answers retries (the published expiry window)
 */
public record IdempotentRequest(ScopedKey id, Fingerprint fingerprint, Duration ttl) {

  public IdempotentRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
  }
}
