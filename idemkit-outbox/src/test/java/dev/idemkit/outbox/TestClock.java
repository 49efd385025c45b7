package dev.idemkit.outbox;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves. */
final class TestClock extends Clock {

  private final AtomicReference<Instant> now;

  TestClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  TestClock() {
    this(Instant.parse("2026-12-01T00:00:00Z"));
  }

  void advance(Duration d) {
    now.updateAndGet(i -> i.plus(d));
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
    return this;
  }
}
