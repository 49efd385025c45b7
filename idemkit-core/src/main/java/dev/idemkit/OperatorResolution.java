package dev.idemkit;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An operator's verdict on an external call whose outcome stayed unknown after every recovery
 * attempt: it was applied (with the far side's reference, e.g. a charge id the operator found in
 * the provider's dashboard) or it was not (so the call runs again, under the same derived key).
 *
 * <p>The store keeps the verdict in the record's data and makes the record due for recovery. The
 * next recovery runs the external phase's lookup with the verdict in {@link
 * OperationContext#operatorResolution()} (for a phase without a lookup, whose far side deduplicates
 * by key, the call it makes again); the lookup answers with it instead of asking the far side:
 *
 * <pre>{@code
 * .lookup((ctx, p) -> {
 *   if (ctx.operatorResolution().isPresent()) {
 *     OperatorResolution verdict = ctx.operatorResolution().get();
 *     return verdict.applied()
 *         ? CallResult.applied(p.withCharge(verdict.externalReference()))
 *         : CallResult.notApplied("an operator found no charge");
 *   }
 *   return askTheProvider(p);
 * })
 * }</pre>
 *
 * <p>The verdict is used once: the phase's next write stores the data without it.
 *
 * @param applied whether the external effect happened
 * @param externalReference the far side's reference of the effect when applied, else {@code null}
 */
public record OperatorResolution(boolean applied, String externalReference) {

  /** The data key of the verdict: {@code APPLIED} or {@code NOT_APPLIED}. */
  public static final String OUTCOME_KEY = "idemkit.operator.outcome";

  /** The data key of the external reference given with an {@code APPLIED} verdict. */
  public static final String REFERENCE_KEY = "idemkit.operator.externalReference";

  public OperatorResolution {
    if (applied) {
      Objects.requireNonNull(externalReference, "an applied outcome needs its external reference");
      if (externalReference.isBlank()) {
        throw new IllegalArgumentException("an applied outcome needs its external reference");
      }
    } else if (externalReference != null) {
      throw new IllegalArgumentException("a call that was not applied has no external reference");
    }
  }

  public static OperatorResolution applied(String externalReference) {
    return new OperatorResolution(true, externalReference);
  }

  public static OperatorResolution notApplied() {
    return new OperatorResolution(false, null);
  }

  /** {@code APPLIED} or {@code NOT_APPLIED}. */
  public String outcome() {
    return applied ? "APPLIED" : "NOT_APPLIED";
  }

  /** Whether {@code key} is one of the reserved keys a verdict is stored under. */
  public static boolean isVerdictKey(String key) {
    return OUTCOME_KEY.equals(key) || REFERENCE_KEY.equals(key);
  }

  /**
   * The verdict {@code record} holds that recovery has not acted on yet: an operator's resolution
   * was stored (which resets the record's attempts to zero) and no attempt has counted since, the
   * record still unsettled. A store refuses a second resolution while there is one ({@link
   * dev.idemkit.spi.RecoveryAdministration#resolve}), so that two operators' verdicts never merge;
   * an admin endpoint compares the second with this one to answer a repeat as the first.
   */
  public static Optional<OperatorResolution> pendingIn(IdempotencyRecord record) {
    if (!record.state().isLive() || record.recoveryAttempts() != 0) {
      return Optional.empty();
    }
    return in(record.recoveryData());
  }

  /** The verdict stored among {@code data}, if there is one. */
  public static Optional<OperatorResolution> in(Map<String, String> data) {
    String outcome = data.get(OUTCOME_KEY);
    if (outcome == null) {
      return Optional.empty();
    }
    return Optional.of("APPLIED".equals(outcome) ? applied(data.get(REFERENCE_KEY)) : notApplied());
  }
}
