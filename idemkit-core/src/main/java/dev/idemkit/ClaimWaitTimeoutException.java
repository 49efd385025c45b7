package dev.idemkit;

import java.time.Duration;

/**
 * A store gave up waiting for another request's claim of the same key (that request is still
 * running in its transaction). Nothing was stored; the engine answers {@link Outcome.InProgress},
 * so the client retries later with the same key.
 */
public class ClaimWaitTimeoutException extends RuntimeException {

  private final transient ScopedKey id;

  public ClaimWaitTimeoutException(ScopedKey id, Duration waited) {
    super("Gave up after " + waited + " waiting for another request's claim of " + id);
    this.id = id;
  }

  public ScopedKey id() {
    return id;
  }
}
