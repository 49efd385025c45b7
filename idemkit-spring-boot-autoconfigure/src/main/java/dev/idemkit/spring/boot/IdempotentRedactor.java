package dev.idemkit.spring.boot;

import dev.idemkit.spi.ResponseRedactor;

/**
 * A bean that redacts an operation's answers before they are stored, for what the {@code
 * idemkit.protection.redact.*} field paths cannot say.
 */
public interface IdempotentRedactor extends ResponseRedactor {

  /** The operation, as in {@link Idempotent#operation()}. */
  String operation();
}
