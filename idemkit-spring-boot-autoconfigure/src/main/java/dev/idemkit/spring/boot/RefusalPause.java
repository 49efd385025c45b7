package dev.idemkit.spring.boot;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pause before a quota's refusal is answered ({@code idemkit.quota.refusal-pause}): a client
 * that sends again the moment it is refused, ignoring {@code Retry-After}, then sends one request a
 * pause per connection instead of as many as the service can refuse, and its refusals stop taking
 * the other tenants' CPU. The pause is taken after the engine answered, holding no connection and
 * no place of the tenant's bulkhead; it is never longer than the refusal's {@code Retry-After}. At
 * most {@code idemkit.quota.max-paused-refusals-per-tenant} of one tenant's refusals wait at once:
 * more are answered at once, so that a tenant with many connections cannot hold the request
 * threads. Refusals of the bulkhead itself ({@code concurrent_requests}) have waited already and
 * are not paused.
 *
 * <p>One instance is a bean, shared by the layer's own refusals and any the application makes of
 * its own before a request reaches the layer (a per-tenant rate limit in its API gate, say), so
 * that the limit of waiting refusals holds for all of a tenant's (docs/operations.md, "Quotas").
 */
public final class RefusalPause {

  /** How the request thread waits (the JDK's sleep; a test's own). */
  interface Sleeper {
    void sleep(Duration pause) throws InterruptedException;
  }

  static final RefusalPause NONE = new RefusalPause(Duration.ZERO, 0, pause -> {});

  private final Duration pause;
  private final int maxPausedPerTenant;
  private final Sleeper sleeper;
  private final ConcurrentHashMap<String, AtomicInteger> paused = new ConcurrentHashMap<>();

  RefusalPause(Duration pause, int maxPausedPerTenant, Sleeper sleeper) {
    if (pause.isNegative() || maxPausedPerTenant < 0) {
      throw new IllegalStateException(
          "idemkit.quota.refusal-pause ("
              + pause
              + ") and max-paused-refusals-per-tenant ("
              + maxPausedPerTenant
              + ") are 0 (no pause) or positive");
    }
    this.pause = pause;
    this.maxPausedPerTenant = maxPausedPerTenant;
    this.sleeper = sleeper;
  }

  static RefusalPause of(IdemkitProperties.Quota quota) {
    return new RefusalPause(
        quota.getRefusalPause(),
        quota.getMaxPausedRefusalsPerTenant(),
        p -> Thread.sleep(p.toMillis(), p.toNanosPart() % 1_000_000));
  }

  /**
   * Waits before {@code tenant}'s refusal by {@code limit} (the quota's name, such as {@code
   * new_keys}, or the application's own) is answered: the pause, at most {@code retryAfter}; none
   * for the bulkhead's refusals ({@code concurrent_requests}) or when the tenant's places to wait
   * are all taken. Call it on the request's thread, holding no connection and no lock. Answers how
   * long it waited.
   */
  public Duration before(String tenant, String limit, Duration retryAfter) {
    if (pause.isZero() || maxPausedPerTenant == 0 || "concurrent_requests".equals(limit)) {
      return Duration.ZERO;
    }
    AtomicInteger waiting = paused.computeIfAbsent(tenant, t -> new AtomicInteger());
    try {
      if (waiting.incrementAndGet() > maxPausedPerTenant) {
        return Duration.ZERO;
      }
      Duration wait = pause.compareTo(retryAfter) <= 0 ? pause : retryAfter;
      sleeper.sleep(wait);
      return wait;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Duration.ZERO;
    } finally {
      waiting.decrementAndGet();
    }
  }
}
