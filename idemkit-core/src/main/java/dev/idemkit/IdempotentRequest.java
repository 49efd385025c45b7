package dev.idemkit;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * One request to run an operation idempotently.
 *
 * @param id the scoped key
 * @param fingerprint the fingerprint of the canonical command, under the current recipe
 * @param ttl how long the record answers retries (the published expiry window)
 * @param recompute this request's fingerprint under the recipe and key of a stored fingerprint (see
 *     {@link FingerprintRecipes#recompute(Object, Fingerprint)}); used only when a record was made
 *     with another recipe or key than {@code fingerprint}, so that a rotation never turns a retry
 *     into a mismatch. Empty when it cannot.
 */
public record IdempotentRequest(
    ScopedKey id,
    Fingerprint fingerprint,
    Duration ttl,
    Function<Fingerprint, Optional<Fingerprint>> recompute) {

  public IdempotentRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(recompute, "recompute");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
  }

  /** A request whose fingerprint has a single recipe. */
  public IdempotentRequest(ScopedKey id, Fingerprint fingerprint, Duration ttl) {
    this(id, fingerprint, ttl, stored -> Optional.empty());
  }

  /**
   * Whether {@code stored} (a record's fingerprint) is this request's command: equal, or equal to
   * this command recomputed under the stored recipe and key.
   */
  public boolean sameCommandAs(Fingerprint stored) {
    if (stored.equals(fingerprint)) {
      return true;
    }
    if (stored.sameRecipeAs(fingerprint)) {
      return false;
    }
    return recompute.apply(stored).map(stored::equals).orElse(false);
  }
}
