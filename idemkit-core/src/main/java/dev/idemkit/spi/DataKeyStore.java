package dev.idemkit.spi;

import java.util.List;
import java.util.Optional;

/**
 * Where wrapped tenant data keys live (a table next to the records for the PostgreSQL store).
 * Deleting a tenant's keys is crypto-shredding: every answer sealed with them becomes unreadable,
 * wherever copies of the records went (replicas, backups).
 */
public interface DataKeyStore {

  /**
   * The tenant's newest key, which seals new answers; empty if it has none.
   *
   * @param tx the caller's transaction, whose connection the read uses (so a request never needs a
   *     second connection from the pool), or {@code null} outside any transaction
   */
  Optional<WrappedDataKey> current(StoreTransaction tx, String tenant);

  /** One of the tenant's keys by id; empty if it never existed or was destroyed. */
  Optional<WrappedDataKey> find(StoreTransaction tx, String tenant, String keyId);

  /**
   * Stores a new key: in {@code tx} (it exists once that commits, and not if it rolls back), or
   * committed at once when {@code tx} is {@code null}. A store shared by several instances dates
   * the key by its own single clock (the database's), not by {@code key.createdAt()}, the
   * instance's: which key is a tenant's newest ({@link #current}) must not depend on which
   * instance's clock is ahead.
   */
  void insert(StoreTransaction tx, WrappedDataKey key);

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
