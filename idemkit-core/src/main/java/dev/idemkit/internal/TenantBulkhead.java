package dev.idemkit.internal;

import dev.idemkit.Outcome;
import dev.idemkit.Quotas;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * At most {@link Quotas#concurrentRequests()} requests of one tenant at once on this instance: the
 * others wait, up to {@link Quotas#CONCURRENT_WAIT}, then are refused. Without it one tenant's
 * flood, each request holding a connection for its statements and a request thread for its provider
 * call, can take the whole pool and leave the other tenants waiting behind it.
 *
 * <p>Which threads meet here: request threads of one tenant, at that tenant's {@link Semaphore}
 * (fair: the waiting requests get places in the order they came). A place is taken before the
 * request's first statement and given back after its answer, in a {@code finally}, so nothing that
 * ends a request can keep one. A tenant's semaphore stays once made (one small object per tenant
 * the instance has served).
 */
final class TenantBulkhead {

  static final Duration REFUSAL_RETRY_AFTER = Duration.ofSeconds(1);

  private final int places;
  private final ConcurrentHashMap<String, Semaphore> tenants = new ConcurrentHashMap<>();

  TenantBulkhead(int places) {
    this.places = places;
  }

  /**
   * Takes one of {@code tenant}'s places, waiting up to {@link Quotas#CONCURRENT_WAIT}.
   *
   * @return true if a place was taken (give it back with {@link #leave}); false if none came free
   *     in time, or the wait was interrupted (the thread's interrupt status is set again)
   */
  boolean enter(String tenant) {
    if (places == 0) {
      return true;
    }
    Semaphore semaphore = tenants.computeIfAbsent(tenant, t -> new Semaphore(places, true));
    try {
      return semaphore.tryAcquire(Quotas.CONCURRENT_WAIT.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Gives back the place {@link #enter} took for {@code tenant}. */
  void leave(String tenant) {
    if (places > 0) {
      tenants.get(tenant).release();
    }
  }

  /** What a request that got no place is answered. */
  Outcome.QuotaExceeded refusal() {
    return new Outcome.QuotaExceeded("concurrent_requests", places, REFUSAL_RETRY_AFTER);
  }
}
