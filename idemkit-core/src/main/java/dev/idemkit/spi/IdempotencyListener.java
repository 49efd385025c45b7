package dev.idemkit.spi;

import dev.idemkit.CallResult;
import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import java.time.Duration;

/**
 * Hears what the engine does, for meters and logs. Every method has a no-op default; an
 * implementation must be fast and must not throw.
 */
public interface IdempotencyListener {

  IdempotencyListener NONE = new IdempotencyListener() {};

  /** A request got its answer after {@code elapsed}. */
  default void onOutcome(ScopedKey id, Outcome outcome, Duration elapsed) {}

  /** A retry came after the record's window: it ran as a new operation. */
  default void onExpiredRetry(ScopedKey id) {}

  /** A record changed owner (a retry or a recovery took it over). */
  default void onTakeover(ScopedKey id, Takeover kind) {}

  /** A downstream outcome became unknown, or stayed unknown after a recovery attempt. */
  default void onUnknownState(ScopedKey id) {}

  /** An owner found out it lost its lease to another owner; its write was rolled back. */
  default void onLostOwnership(ScopedKey id) {}

  /** An operation failed unexpectedly; the record was left in {@code state}. */
  default void onFailure(ScopedKey id, RecordState state, Throwable cause) {}

  /** One cleanup batch dropped {@code bodies} response bodies and deleted {@code records}. */
  default void onCleanup(long bodies, long records) {}

  /**
   * A record's outcome stayed unknown after the last allowed recovery attempt: it now waits for an
   * operator. Called once per record.
   */
  default void onEscalated(ScopedKey id) {}

  /**
   * A new key was refused because the tenant reached {@code quota} ({@code live_records} or {@code
   * new_keys}); nothing was stored.
   */
  default void onQuotaExceeded(ScopedKey id, String quota) {}

  /**
   * The external call of {@code phase} starts now (or, for a takeover, its lookup, or the call
   * again when the far side deduplicates by key): the record says durably that it may be under way.
   */
  default void onCallStarting(ScopedKey id, String phase) {}

  /** The external call (or lookup) of {@code phase} returned {@code result}, not yet recorded. */
  default void onCallReturned(ScopedKey id, String phase, CallResult<?> result) {}
}
