package dev.idemkit.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock tests move by hand: the seam through which leases and windows expire, never sleeps. */
public final class MutableClock extends Clock {

  private final AtomicReference<Instant> now;

  public MutableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /** Starts at the current time, truncated to microseconds (what PostgreSQL keeps). */
  public static MutableClock startingNow() {
    return new MutableClock(Instant.ofEpochMilli(System.currentTimeMillis()));
  }

  public void advance(Duration by) {
    now.updateAndGet(t -> t.plus(by));
  }

  public void set(Instant instant) {
    now.set(instant);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("MutableClock is UTC only");
  }
}
