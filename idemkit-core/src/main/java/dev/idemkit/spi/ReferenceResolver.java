package dev.idemkit.spi;

import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.util.Optional;

/**
 * For operations replayed by reference ({@link dev.idemkit.ReplayMode#REFERENCE}): builds the
 * answer from the current state of the resource the first request created. Runs inside the
 * replaying request's transaction.
 */
@FunctionalInterface
public interface ReferenceResolver {

  /**
   * The answer for a replay, from the resource as it is now.
   *
   * @param id the scoped key being replayed (its tenant owns the resource)
   * @param resourceType the type stored with the record (e.g. {@code order})
   * @param resourceId the id stored with the record
   * @param stored the stored status and headers (its body is empty)
   * @return the answer, or empty if the resource no longer exists
   */
  Optional<StoredResponse> rebuild(
      ScopedKey id, String resourceType, String resourceId, StoredResponse stored);
}
