package dev.idemkit.spi;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperatorResolution;
import dev.idemkit.ScopedKey;
import java.time.Duration;
import java.util.List;

/**
 * A store capability ({@link IdempotencyStore#capability}): spacing out the recovery attempts of an
 * outcome that stays unknown, escalating it to an operator, and the operator's lists and verdicts.
 * A recovery schedule ({@link dev.idemkit.IdempotencyConfig#recoverySchedule()}) needs it, and so
 * does a recovery worker that spaces out its attempts.
 */
public interface RecoveryAdministration {

  /**
   * Spaces out recovery attempts of a record whose outcome stayed unknown. {@code n}, the attempts
   * made, counts the first request's ({@link IdempotencyStore#suspend} counts each attempt left
   * unknown), so the recovery worker's first attempt, made at once, brings it to 2: the next is due
   * after {@code firstDelay * 2^(n-2)} ({@code firstDelay} after the worker's first attempt, then
   * twice as long each time; {@code firstDelay} too when {@code n} is 1; at most {@code maxDelay}),
   * and client retries are told to wait as long. Once {@code n} reaches {@code maxAttempts} the
   * record is escalated: no further automatic recovery, it waits for an operator ({@link
   * #resolve}).
   */
  RecoveryBackoff backOffRecovery(
      ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts);

  /**
   * Records whose unknown outcome waits between two automatic recovery attempts ({@code
   * UNKNOWN_REQUIRES_RECOVERY}, not escalated, the next attempt not due yet), the soonest next
   * attempt first. Their {@link IdempotencyRecord#lockedUntil()} is when the next attempt is due
   * ({@link #backOffRecovery} sets both). Neither {@link IdempotencyStore#findNeedingRecovery(int)}
   * (not due) nor {@link #findEscalated(int)} (not escalated) lists them: an operator's list needs
   * this too.
   */
  List<IdempotencyRecord> findAwaitingNextAttempt(int limit);

  /** Records waiting for an operator (escalated, outcome still unknown), oldest first. */
  List<IdempotencyRecord> findEscalated(int limit);

  /**
   * An operator's verdict on a record whose outcome is unknown: stored in the record's data for the
   * external phase's lookup ({@link dev.idemkit.OperationContext#operatorResolution()}), the record
   * made due for recovery at once (attempts reset), and a history row written with {@code actor}
   * and {@code reason}. A record with no call pending (a local phase failed after an external
   * effect until it was escalated) takes a verdict too; it is only made due again.
   *
   * <p>A second resolution of the same record before recovery acted on the first ({@link
   * OperatorResolution#pendingIn}) is refused, whatever it says: it never merges into the first (an
   * {@code APPLIED} reference left beside a {@code NOT_APPLIED}, or replacing the first's). The
   * caller tells an identical repeat from a different verdict by reading the record.
   *
   * @return false when the record is not (or no longer) waiting on an unknown outcome, or already
   *     holds a resolution recovery has not acted on
   */
  boolean resolve(ScopedKey id, OperatorResolution resolution, String actor, String reason);
}
