package dev.idemkit.spi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Where a phased operation stands once a transaction commits: the phase {@code recoveryPoint} is
 * durable (null: before any phase) with {@code data}, and {@code pendingExternal} names the call
 * that may be under way (or null). What {@link IdempotencyStore#advance} and {@link
 * IdempotencyStore#insertInProgress} write, and what a recovery resumes from.
 */
public record Checkpoint(String recoveryPoint, String pendingExternal, Map<String, String> data) {
  public Checkpoint {
    data = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(data, "data")));
  }

  /** The same checkpoint with {@code data} in place of its data (sealed, for instance). */
  public Checkpoint withData(Map<String, String> data) {
    return new Checkpoint(recoveryPoint, pendingExternal, data);
  }
}
