package dev.idemkit.testing;

import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Counts what the engine reported, by event name, for assertions. */
public final class RecordingListener implements IdempotencyListener {

  private final ConcurrentHashMap<String, AtomicLong> counts = new ConcurrentHashMap<>();

  public long count(String event) {
    AtomicLong c = counts.get(event);
    return c == null ? 0 : c.get();
  }

  private void add(String event) {
    counts.computeIfAbsent(event, e -> new AtomicLong()).incrementAndGet();
  }

  @Override
  public void onOutcome(ScopedKey id, Outcome outcome, Duration elapsed) {
    add("outcome." + outcome.getClass().getSimpleName());
  }

  @Override
  public void onExpiredRetry(ScopedKey id) {
    add("expiredRetry");
  }

  @Override
  public void onTakeover(ScopedKey id, Takeover kind) {
    add("takeover." + kind);
  }

  @Override
  public void onUnknownState(ScopedKey id) {
    add("unknownState");
  }

  @Override
  public void onEscalated(ScopedKey id) {
    add("escalated");
  }

  @Override
  public void onLostOwnership(ScopedKey id) {
    add("lostOwnership");
  }

  @Override
  public void onFailure(ScopedKey id, RecordState state, Throwable cause) {
    add("failure." + state);
  }
}
