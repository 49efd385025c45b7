package dev.idemkit.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How often and how long an operation is retried: immutable and thread-safe; build one with {@link
 * #builder()} and share it.
 *
 * <p>The wait before retry {@code n} (the first retry is {@code n = 1}) is drawn uniformly from
 * {@code [0, min(maxBackoff, initialBackoff · 2^(n-1))]}: exponential backoff with <em>full
 * jitter</em>, so that many clients failed by the same outage do not come back in lockstep. When
 * the server sent {@code Retry-After}, the wait is at least that long. An operation stops after
 * {@link #maxAttempts()} attempts, or when the next attempt would start at or after {@link
 * #deadline()} (counted from the first attempt), whichever comes first; each attempt's timeout is
 * cut to the time left before the deadline. A {@code Retry-After} that reaches past the deadline
 * stops the operation at once rather than retrying early.
 */
public final class RetryPolicy {

  private static final RetryPolicy DEFAULTS = builder().build();

  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final Duration deadline;

  private RetryPolicy(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.deadline = b.deadline;
  }

  /**
   * The defaults: 8 attempts, backoff from 100 ms up to 10 s, a deadline of 60 s.
   *
   * @return the default policy
   */
  public static RetryPolicy defaults() {
    return DEFAULTS;
  }

  /**
   * Starts a policy with the {@linkplain #defaults() defaults}.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Attempts in all, the first one included; at least 1. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The ceiling of the first retry's wait. */
  public Duration initialBackoff() {
    return initialBackoff;
  }

  /** The largest ceiling of any wait (a {@code Retry-After} may still ask for more). */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** How long an operation may take from its first attempt; no attempt starts after it. */
  public Duration deadline() {
    return deadline;
  }

  /**
   * The ceiling of the wait before retry {@code retry}: {@code min(maxBackoff, initialBackoff ·
   * 2^(retry-1))}.
   *
   * @param retry the retry's number, 1 for the first retry
   * @return the ceiling
   */
  public Duration backoffCeiling(int retry) {
    if (retry < 1) {
      throw new IllegalArgumentException("retry numbers start at 1, not " + retry);
    }
    long initial = initialBackoff.toNanos();
    long max = maxBackoff.toNanos();
    int doublings = retry - 1;
    if (doublings >= 62 || initial > (max >> doublings)) {
      return maxBackoff;
    }
    return Duration.ofNanos(initial << doublings);
  }

  /**
   * The full-jitter wait before retry {@code retry} for a given draw of the random source: {@code
   * random · backoffCeiling(retry)}.
   *
   * @param retry the retry's number, 1 for the first retry
   * @param random a uniform draw in {@code [0, 1]}
   * @return the wait, between zero and the ceiling
   */
  public Duration backoff(int retry, double random) {
    if (!(random >= 0.0 && random <= 1.0)) {
      throw new IllegalArgumentException("random draw must be in [0, 1], not " + random);
    }
    return Duration.ofNanos((long) (backoffCeiling(retry).toNanos() * random));
  }

  /**
   * The wait before retry {@code retry}: the jittered backoff, at least the server's Retry-After.
   */
  Duration waitBefore(int retry, Optional<Duration> retryAfter, double random) {
    Duration wait = backoff(retry, random);
    return retryAfter.filter(ra -> ra.compareTo(wait) > 0).orElse(wait);
  }

  @Override
  public String toString() {
    return "RetryPolicy[maxAttempts="
        + maxAttempts
        + ", initialBackoff="
        + initialBackoff
        + ", maxBackoff="
        + maxBackoff
        + ", deadline="
        + deadline
        + "]";
  }

  /** Builds a {@link RetryPolicy}. Not thread-safe; the policy it builds is. */
  public static final class Builder {
    private int maxAttempts = 8;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(10);
    private Duration deadline = Duration.ofSeconds(60);

    private Builder() {}

    /**
     * Attempts in all, the first one included (1 means no retry). Default 8.
     *
     * @param maxAttempts at least 1
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, not " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * The ceiling of the first retry's wait; it doubles with every retry. Default 100 ms.
     *
     * @param initialBackoff zero or positive
     * @return this builder
     */
    public Builder initialBackoff(Duration initialBackoff) {
      this.initialBackoff = nonNegative(initialBackoff, "initialBackoff");
      return this;
    }

    /**
     * The largest ceiling of a wait. Default 10 s.
     *
     * @param maxBackoff zero or positive
     * @return this builder
     */
    public Builder maxBackoff(Duration maxBackoff) {
      this.maxBackoff = nonNegative(maxBackoff, "maxBackoff");
      return this;
    }

    /**
     * How long an operation may take, from its first attempt. Default 60 s.
     *
     * @param deadline positive
     * @return this builder
     */
    public Builder deadline(Duration deadline) {
      Objects.requireNonNull(deadline, "deadline");
      if (deadline.isZero() || deadline.isNegative()) {
        throw new IllegalArgumentException("deadline must be positive, not " + deadline);
      }
      this.deadline = deadline;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException if {@code maxBackoff} is shorter than {@code initialBackoff}
     */
    public RetryPolicy build() {
      if (maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException(
            "maxBackoff ("
                + maxBackoff
                + ") is shorter than initialBackoff ("
                + initialBackoff
                + ")");
      }
      return new RetryPolicy(this);
    }

    private static Duration nonNegative(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative()) {
        throw new IllegalArgumentException(name + " must not be negative, not " + d);
      }
      return d;
    }
  }
}
