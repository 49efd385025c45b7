package dev.idemkit.examples.payments.web;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * {@code payments.rate-limit-per-second}: a token bucket per tenant, refilled at the limit's rate
 * and holding at most one second's worth, so a tenant gets the limit a second on average and never
 * more than one second's worth at once (a fixed one-second window would let a flooder take two
 * seconds' worth around each window's edge). A refused request takes no token. Per instance: each
 * instance of the service allows the limit.
 */
final class TenantRateLimit {

  private final int perSecond;
  private final LongSupplier nanoTime;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  /** {@code perSecond}: 0 or less turns the limit off. */
  TenantRateLimit(int perSecond, LongSupplier nanoTime) {
    this.perSecond = perSecond;
    this.nanoTime = nanoTime;
  }

  /** The limit a second (0: none). */
  int perSecond() {
    return Math.max(perSecond, 0);
  }

  /** Whether {@code tenant} may make one more request now (taking a token if so). */
  boolean allows(String tenant) {
    if (perSecond <= 0) {
      return true;
    }
    return buckets.computeIfAbsent(tenant, t -> new Bucket(nanoTime.getAsLong())).take();
  }

  /** One tenant's tokens. */
  private final class Bucket {
    private double tokens = perSecond;
    private long refilledAt;

    Bucket(long now) {
      this.refilledAt = now;
    }

    synchronized boolean take() {
      long now = nanoTime.getAsLong();
      tokens = Math.min(perSecond, tokens + (now - refilledAt) * (perSecond / 1e9));
      refilledAt = now;
      if (tokens < 1) {
        return false;
      }
      tokens -= 1;
      return true;
    }
  }
}
