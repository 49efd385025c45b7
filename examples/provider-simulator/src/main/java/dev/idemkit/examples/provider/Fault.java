package dev.idemkit.examples.provider;

import java.util.Locale;

/** The ways the simulated provider fails, by the names clients and configuration use. */
public enum Fault {
  /** Adds delay before anything happens. */
  LATENCY,
  /** Answers 503 before charging: nothing is charged. */
  ERROR_BEFORE_CHARGE,
  /** Declines the charge (402): a deterministic business refusal. */
  DECLINE,
  /** Charges, then drops the connection before answering: the caller never learns. */
  DROP_AFTER_CHARGE,
  /** Charges, then answers after the caller's timeout. */
  TIMEOUT_AFTER_CHARGE,
  /** Refuses lookups (503) of this charge's key for a while; other charges' lookups still work. */
  LOOKUP_UNAVAILABLE;

  /** The kebab-case name, e.g. {@code drop-after-charge}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * The fault named {@code name}.
   *
   * @throws IllegalArgumentException if no fault has that name
   */
  public static Fault fromWireName(String name) {
    return valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
  }
}
