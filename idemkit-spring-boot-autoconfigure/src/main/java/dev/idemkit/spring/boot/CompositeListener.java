package dev.idemkit.spring.boot;

import dev.idemkit.CallResult;
import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.util.List;

/** Hands every event to each listener bean (meters, logs). */
final class CompositeListener implements IdempotencyListener {

  private final List<IdempotencyListener> listeners;

  private CompositeListener(List<IdempotencyListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  static IdempotencyListener of(List<IdempotencyListener> listeners) {
    if (listeners.isEmpty()) {
      return IdempotencyListener.NONE;
    }
    return listeners.size() == 1 ? listeners.get(0) : new CompositeListener(listeners);
  }

  @Override
  public void onOutcome(ScopedKey id, Outcome outcome, Duration elapsed) {
    listeners.forEach(l -> l.onOutcome(id, outcome, elapsed));
  }

  @Override
  public void onExpiredRetry(ScopedKey id) {
    listeners.forEach(l -> l.onExpiredRetry(id));
  }

  @Override
  public void onTakeover(ScopedKey id, Takeover kind) {
    listeners.forEach(l -> l.onTakeover(id, kind));
  }

  @Override
  public void onUnknownState(ScopedKey id) {
    listeners.forEach(l -> l.onUnknownState(id));
  }

  @Override
  public void onLostOwnership(ScopedKey id) {
    listeners.forEach(l -> l.onLostOwnership(id));
  }

  @Override
  public void onFailure(ScopedKey id, RecordState state, Throwable cause) {
    listeners.forEach(l -> l.onFailure(id, state, cause));
  }

  @Override
  public void onCleanup(long bodies, long records) {
    listeners.forEach(l -> l.onCleanup(bodies, records));
  }

  @Override
  public void onEscalated(ScopedKey id) {
    listeners.forEach(l -> l.onEscalated(id));
  }

  @Override
  public void onQuotaExceeded(ScopedKey id, String quota) {
    listeners.forEach(l -> l.onQuotaExceeded(id, quota));
  }

  @Override
  public void onCallStarting(ScopedKey id, String phase) {
    listeners.forEach(l -> l.onCallStarting(id, phase));
  }

  @Override
  public void onCallReturned(ScopedKey id, String phase, CallResult<?> result) {
    listeners.forEach(l -> l.onCallReturned(id, phase, result));
  }
}
