package dev.idemkit.spring.boot;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pause before a quota's refusal is answered ({@code idemkit.quota.refusal-pause}): a client
 * that sends again the moment it is refused, ignoring {@code Retry-After}, then sends one request a
 * pause per connection instead of as many as the service can refuse, and its refusals stop taking
 * the other tenants' CPU. The pause is never longer than the refusal's {@code Retry-After} (a
 * parked refusal may wait its turn as well, below), and holds no connection and no place of the
 * tenant's bulkhead. Refusals of the bulkhead itself ({@code concurrent_requests}) have waited
 * already and are not paused.
 *
 * <p>Two ways to wait, each with its limit per tenant, past which refusals are answered at once:
 *
 * <ul>
 *   <li>{@link #before}, on the request's thread (the layer's own quota refusals, answered from
 *       inside a handler): at most {@code idemkit.quota.max-paused-refusals-per-tenant} of a
 *       tenant's at once, so that a tenant with many connections cannot hold the request threads;
 *   <li>{@link #later}, holding no thread: the answer is written after the pause by this class's
 *       own thread, for a refusal made before the request reaches a handler, in a servlet filter
 *       that has started the request's async mode (an API gate's rate limit, say). A tenant's
 *       parked refusals are answered in turn, at most {@code max-paused-refusals-per-tenant} a
 *       pause (16 a second with the payments service's settings), however many connections they
 *       came on: a client flooding from a thousand connections gets 16 answers a second, not a
 *       thousand, each connection waiting its turn. At most {@code
 *       idemkit.quota.max-parked-refusals-per-tenant} of a tenant's are parked at once: each holds
 *       only its connection, so the limit can be high.
 * </ul>
 *
 * One instance is a bean, shared by the layer's refusals and the application's (docs/operations.md,
 * "Quotas").
 */
public final class RefusalPause implements AutoCloseable {

  /** How the request thread waits (the JDK's sleep; a test's own). */
  interface Sleeper {
    void sleep(Duration pause) throws InterruptedException;
  }

  private final Duration pause;
  private final int maxPausedPerTenant;
  private final int maxParkedPerTenant;
  private final Sleeper sleeper;
  private final ConcurrentHashMap<String, AtomicInteger> paused = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, AtomicInteger> parked = new ConcurrentHashMap<>();
  private final Set<Parked> pending = ConcurrentHashMap.newKeySet();

  /** When each tenant's last parked refusal is to be answered ({@link System#nanoTime}). */
  private final ConcurrentHashMap<String, AtomicLong> lastAnswerAt = new ConcurrentHashMap<>();

  /** Writes the parked refusals' answers; made on the first one. */
  private ScheduledThreadPoolExecutor answers;

  RefusalPause(Duration pause, int maxPausedPerTenant, int maxParkedPerTenant, Sleeper sleeper) {
    if (pause.isNegative() || maxPausedPerTenant < 0 || maxParkedPerTenant < 0) {
      throw new IllegalStateException(
          "idemkit.quota.refusal-pause ("
              + pause
              + "), max-paused-refusals-per-tenant ("
              + maxPausedPerTenant
              + ") and max-parked-refusals-per-tenant ("
              + maxParkedPerTenant
              + ") are 0 (no pause) or positive");
    }
    this.pause = pause;
    this.maxPausedPerTenant = maxPausedPerTenant;
    this.maxParkedPerTenant = maxParkedPerTenant;
    this.sleeper = sleeper;
  }

  static RefusalPause of(IdemkitProperties.Quota quota) {
    return new RefusalPause(
        quota.getRefusalPause(),
        quota.getMaxPausedRefusalsPerTenant(),
        quota.getMaxParkedRefusalsPerTenant(),
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
    if (!pauses(limit, maxPausedPerTenant)) {
      return Duration.ZERO;
    }
    AtomicInteger waiting = paused.computeIfAbsent(tenant, t -> new AtomicInteger());
    try {
      if (waiting.incrementAndGet() > maxPausedPerTenant) {
        return Duration.ZERO;
      }
      Duration wait = wait(retryAfter);
      sleeper.sleep(wait);
      return wait;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Duration.ZERO;
    } finally {
      waiting.decrementAndGet();
    }
  }

  /**
   * Runs {@code answer} (which writes the refusal and completes the request's async mode) after the
   * pause, at most {@code retryAfter}, and the tenant's parked refusals before it, on this class's
   * thread, and answers {@code true}; or answers {@code false} without running it, for the caller
   * to answer at once: no pause is set, the refusal is the bulkhead's, or the tenant's places to
   * park are all taken. {@code answer} must not throw or block for long: one thread writes every
   * tenant's answers.
   */
  public boolean later(String tenant, String limit, Duration retryAfter, Runnable answer) {
    if (!pauses(limit, maxParkedPerTenant)) {
      return false;
    }
    AtomicInteger waiting = parked.computeIfAbsent(tenant, t -> new AtomicInteger());
    if (waiting.incrementAndGet() > maxParkedPerTenant) {
      waiting.decrementAndGet();
      return false;
    }
    Parked run = new Parked(answer, waiting);
    pending.add(run);
    ScheduledThreadPoolExecutor executor = answers();
    try {
      if (executor != null) {
        long now = System.nanoTime();
        long due = turn(tenant, now + wait(retryAfter).toNanos());
        executor.schedule(run, due - now, TimeUnit.NANOSECONDS);
        return true;
      }
    } catch (RejectedExecutionException closing) {
      // closed meanwhile: answered now, below
    }
    run.run();
    return true;
  }

  /** A parked refusal's answer: run once, by the pause's thread or by {@link #close}. */
  private final class Parked implements Runnable {
    private final Runnable answer;
    private final AtomicInteger waiting;
    private final AtomicBoolean ran = new AtomicBoolean();

    Parked(Runnable answer, AtomicInteger waiting) {
      this.answer = answer;
      this.waiting = waiting;
    }

    @Override
    public void run() {
      if (!ran.compareAndSet(false, true)) {
        return;
      }
      pending.remove(this);
      try {
        answer.run();
      } finally {
        waiting.decrementAndGet();
      }
    }
  }

  /**
   * The longest a parked refusal can wait: its turn behind all the tenant's others, then the pause.
   * A filter parking a request sets its async timeout above this.
   */
  public Duration longestParkedWait() {
    return maxPausedPerTenant == 0
        ? pause
        : pause.multipliedBy(maxParkedPerTenant / maxPausedPerTenant + 2L);
  }

  /**
   * When a refusal of {@code tenant} due at {@code earliest} is answered: then, or a turn after the
   * tenant's last parked refusal, at most {@code maxPausedPerTenant} a pause.
   */
  private long turn(String tenant, long earliest) {
    long spacing = pause.toNanos() / maxPausedPerTenant;
    AtomicLong last = lastAnswerAt.computeIfAbsent(tenant, t -> new AtomicLong(earliest - spacing));
    return last.accumulateAndGet(
        earliest, (prev, e) -> e - (prev + spacing) >= 0 ? e : prev + spacing);
  }

  /** Answers every parked refusal now; later ones are answered at once. */
  @Override
  public void close() {
    synchronized (this) {
      if (answers == null || answers.isShutdown()) {
        return;
      }
      answers.shutdownNow();
    }
    List.copyOf(pending).forEach(Runnable::run);
  }

  private boolean pauses(String limit, int places) {
    return !pause.isZero()
        && places > 0
        && maxPausedPerTenant > 0
        && !"concurrent_requests".equals(limit);
  }

  private Duration wait(Duration retryAfter) {
    return pause.compareTo(retryAfter) <= 0 ? pause : retryAfter;
  }

  /** The answers' thread, made on first use; {@code null} once closed. */
  private synchronized ScheduledThreadPoolExecutor answers() {
    if (answers == null) {
      answers =
          new ScheduledThreadPoolExecutor(
              1,
              r -> {
                Thread t = new Thread(r, "idemkit-refusal-pause");
                t.setDaemon(true);
                return t;
              });
      answers.setRemoveOnCancelPolicy(true);
    }
    return answers.isShutdown() ? null : answers;
  }
}
