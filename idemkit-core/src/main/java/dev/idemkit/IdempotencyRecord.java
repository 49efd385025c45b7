package dev.idemkit;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The stored memory of one scoped key, as a store last saw it.
 *
 * @param id the scoped key
 * @param fingerprint the fingerprint of the command that first claimed the key
 * @param state the state
 * @param fencingToken bumped on every change of owner; every owner write is conditional on it
 * @param lockedUntil the owner's lease
 * @param recoveryPoint the last phase whose effects are durable, or {@code null} before any
 * @param pendingExternal the external phase started but not yet recorded, or {@code null}
 * @param recoveryData small durable values the phases keep (e.g. a local payment id)
 * @param recoveryAttempts how many recoveries of an unknown outcome were tried
 * @param response the stored answer of a replayable record, or {@code null}
 * @param createdAt when the key was first claimed (or claimed anew after expiry)
 * @param updatedAt the last write
 * @param expiresAt when the record stops answering retries
 * @param escalatedAt when automatic recovery gave up on the record's unknown outcome and left it to
 *     an operator ({@link #awaitsOperator()}), or {@code null}; a store that does not escalate
 *     leaves it {@code null}
 */
public record IdempotencyRecord(
    ScopedKey id,
    Fingerprint fingerprint,
    RecordState state,
    long fencingToken,
    Instant lockedUntil,
    String recoveryPoint,
    String pendingExternal,
    Map<String, String> recoveryData,
    int recoveryAttempts,
    StoredResponse response,
    Instant createdAt,
    Instant updatedAt,
    Instant expiresAt,
    Instant escalatedAt) {

  public IdempotencyRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(lockedUntil, "lockedUntil");
    recoveryData = Map.copyOf(recoveryData == null ? Map.of() : recoveryData);
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }

  /** A record that was never escalated to an operator (or a store that does not escalate). */
  public IdempotencyRecord(
      ScopedKey id,
      Fingerprint fingerprint,
      RecordState state,
      long fencingToken,
      Instant lockedUntil,
      String recoveryPoint,
      String pendingExternal,
      Map<String, String> recoveryData,
      int recoveryAttempts,
      StoredResponse response,
      Instant createdAt,
      Instant updatedAt,
      Instant expiresAt) {
    this(
        id,
        fingerprint,
        state,
        fencingToken,
        lockedUntil,
        recoveryPoint,
        pendingExternal,
        recoveryData,
        recoveryAttempts,
        response,
        createdAt,
        updatedAt,
        expiresAt,
        null);
  }

  /**
   * The outcome is unknown and automatic recovery gave up on it: it waits for an operator's
   * resolution (a client's retry is told so).
   */
  public boolean awaitsOperator() {
    return escalatedAt != null && state == RecordState.UNKNOWN_REQUIRES_RECOVERY;
  }

  /** Expired at {@code now}: past its window and not live. */
  public boolean isExpiredAt(Instant now) {
    return !state.isLive() && !now.isBefore(expiresAt);
  }

  /** The owner's lease has run out at {@code now}. */
  public boolean isLeaseExpiredAt(Instant now) {
    return !now.isBefore(lockedUntil);
  }

  public Optional<StoredResponse> storedResponse() {
    return Optional.ofNullable(response);
  }
}
