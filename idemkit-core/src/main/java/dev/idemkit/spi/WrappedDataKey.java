package dev.idemkit.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * A tenant's data key as stored: wrapped by a master key, never in the clear.
 *
 * @param tenant the tenant whose answers it encrypts
 * @param keyId the data key's id, written into every envelope it seals
 * @param masterKeyId the master key that wrapped it
 * @param wrapped the wrapped key bytes
 * @param createdAt when it was made; a tenant's newest key seals new answers
 */
public record WrappedDataKey(
    String tenant, String keyId, String masterKeyId, byte[] wrapped, Instant createdAt) {
  public WrappedDataKey {
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(keyId, "keyId");
    Objects.requireNonNull(masterKeyId, "masterKeyId");
    wrapped = Objects.requireNonNull(wrapped, "wrapped").clone();
    Objects.requireNonNull(createdAt, "createdAt");
  }

  @Override
  public byte[] wrapped() {
    return wrapped.clone();
  }
}
