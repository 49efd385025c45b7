package dev.idemkit;

import java.util.Objects;

/**
 * A tenant's quota refused a new key ({@link IdempotencyConfig#quotas()}): the transaction that
 * claimed it rolls back, claim included, so nothing is stored. The engine answers {@link
 * #outcome()}. The engine throws it in that transaction when a quota refuses the key.
 */
public class QuotaExceededException extends RuntimeException {

  private final transient Outcome.QuotaExceeded outcome;

  public QuotaExceededException(Outcome.QuotaExceeded outcome) {
    super("Quota " + outcome.quota() + " (" + outcome.limit() + ") exceeded", null, false, false);
    this.outcome = Objects.requireNonNull(outcome);
  }

  /** The refusal to answer: which quota, its limit, and when to retry. */
  public Outcome.QuotaExceeded outcome() {
    return outcome;
  }
}
