package dev.idemkit.spi;

import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;

/**
 * Moves a stored answer one schema version up, for replays after the answer's shape changed (a
 * field renamed, a field added). Registered per operation and source version; chained until no
 * upcaster takes the answer's version.
 */
@FunctionalInterface
public interface ResponseUpcaster {

  /** The answer in the next schema version ({@code schemaVersion} increased). */
  StoredResponse upcast(ScopedKey id, StoredResponse response);
}
