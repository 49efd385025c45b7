package dev.idemkit.outbox;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks the builders run in {@code build()}: a setting that would make a part spin, never
 * acknowledge or forget too early is refused there, with a message naming the part, the setting and
 * the value given.
 */
final class Settings {

  private Settings() {}

  static int atLeastOne(String part, String setting, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(
          part + ": " + setting + " must be at least 1, was " + value);
    }
    return value;
  }

  static Duration positive(String part, String setting, Duration value) {
    Objects.requireNonNull(value, setting);
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(part + ": " + setting + " must be positive, was " + value);
    }
    return value;
  }

  /** A pause between polls: at least a millisecond (a shorter one would be a busy loop). */
  static Duration pollInterval(String part, Duration value) {
    Objects.requireNonNull(value, "pollInterval");
    if (value.toMillis() < 1) {
      throw new IllegalArgumentException(
          part + ": pollInterval must be at least 1 ms, was " + value);
    }
    return value;
  }

  /** Backoff bounds: both positive, the maximum not below the initial one. */
  static void backoff(String part, Duration initial, Duration max) {
    positive(part, "initial backoff", initial);
    positive(part, "max backoff", max);
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException(
          part
              + ": max backoff must not be less than the initial backoff, was "
              + max
              + " with an initial backoff of "
              + initial);
    }
  }
}
