package dev.idemkit.spi;

import dev.idemkit.ScopedKey;

/**
 * {@link IdempotencyStore#insertFinished}'s insert found the key taken: another request's record,
 * committed or committed while this insert waited on it (a concurrent duplicate that won), or an
 * older record of the key (expired, or left by a claim-first operation). The transaction that ran
 * the operation is rolled back with everything in it, so nothing of this run is kept; the engine
 * then answers from the record that is there. Thrown and caught inside the engine; no stack trace.
 */
public final class RecordExistsException extends RuntimeException {

  private final transient ScopedKey id;

  public RecordExistsException(ScopedKey id) {
    super("The key " + id + " already has a record", null, false, false);
    this.id = id;
  }

  public ScopedKey id() {
    return id;
  }
}
