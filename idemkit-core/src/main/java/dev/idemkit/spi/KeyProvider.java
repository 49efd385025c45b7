package dev.idemkit.spi;

/**
 * Master keys: wraps and unwraps the per-tenant data keys that encrypt stored answers. The default
 * ({@link dev.idemkit.StaticKeyProvider}) holds keys from configuration; a KMS implements this with
 * its encrypt/decrypt (or wrap/unwrap) calls, and then master keys never enter the process.
 *
 * <p>Called only when a data key is created, rotated, re-wrapped or first used by a process (data
 * keys are cached unwrapped for a short time), never once per request.
 */
public interface KeyProvider {

  /** The id of the master key new data keys are wrapped with. */
  String currentKeyId();

  /**
   * Wraps (encrypts) {@code dataKey} with master key {@code masterKeyId}, bound to {@code context}
   * (the tenant and data key id): unwrapping with another context fails.
   */
  byte[] wrap(String masterKeyId, byte[] dataKey, byte[] context);

  /**
   * Unwraps what {@link #wrap} returned.
   *
   * @throws IllegalStateException if the master key is unknown or the wrapped key does not
   *     authenticate under it and {@code context}
   */
  byte[] unwrap(String masterKeyId, byte[] wrapped, byte[] context);
}
