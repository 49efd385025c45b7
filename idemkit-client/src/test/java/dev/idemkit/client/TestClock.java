package dev.idemkit.client;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A clock that moves only when told to, and a sleeper that moves it instead of sleeping. */
final class TestClock extends Clock {

  private volatile Instant now = Instant.parse("2030-01-01T00:00:00Z");
  private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }

  synchronized void advance(Duration d) {
    now = now.plus(d);
  }

  /** Records each wait and moves the clock by it; never sleeps. */
  Sleeper sleeper() {
    return d -> {
      sleeps.add(d);
      advance(d);
    };
  }

  List<Duration> sleeps() {
    return List.copyOf(sleeps);
  }
}
