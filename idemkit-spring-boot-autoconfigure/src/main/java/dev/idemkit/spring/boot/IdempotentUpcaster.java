package dev.idemkit.spring.boot;

import dev.idemkit.spi.ResponseUpcaster;

/**
 * A bean that moves an operation's stored answers from one schema version to the next when they are
 * replayed (see {@link Idempotent#schemaVersion()}).
 */
public interface IdempotentUpcaster extends ResponseUpcaster {

  /** The operation, as in {@link Idempotent#operation()}. */
  String operation();

  /** The schema version this upcaster reads. */
  int fromVersion();
}
