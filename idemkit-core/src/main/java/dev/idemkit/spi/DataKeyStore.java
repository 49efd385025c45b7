package dev.idemkit.spi;

import java.util.List;
import java.util.Optional;

/**
 * Where wrapped tenant data keys live (a table next to the records for the PostgreSQL store).
 * Deleting a tenant's keys is crypto-shredding: every answer sealed with them becomes unreadable,
 * wherever copies of the records went (replicas, backups).
 */
public interface DataKeyStore {

  /** The tenant's newest key, which seals new answers; empty if it has none. */
  Optional<WrappedDataKey> current(String tenant);

  /** One of the tenant's keys by id; empty if it never existed or was destroyed. */
  Optional<WrappedDataKey> find(String tenant, String keyId);

  /** Stores a new key. */
  void insert(WrappedDataKey key);

  /** Replaces a key's wrapping (master key rotation); the key itself does not change. */
  void rewrap(String tenant, String keyId, String masterKeyId, byte[] wrapped);

  /** Every key, for re-wrapping under a new master key. */
  List<WrappedDataKey> all();

  /**
   * Destroys every key of the tenant.
   *
   * @return how many keys were destroyed
   */
  int destroy(String tenant);
}
