package dev.idemkit;

/**
 * Per-tenant limits on new keys, checked by the store in the claim's own transaction, as its last
 * writes before the commit (no transaction or round trip of their own). A retry of a key that has a
 * record is never refused. Exact across instances: the new key is counted under a row lock of the
 * tenant's current minute, and live records are counted after that lock is held, so every admission
 * sees the ones committed before it.
 *
 * @param newKeysPerMinute most new keys a tenant may claim per minute of the store's clock; 0: no
 *     limit
 * @param liveRecords most live records (phased operations in progress or awaiting recovery) a
 *     tenant may have; 0: no limit
 */
public record Quotas(int newKeysPerMinute, int liveRecords) {

  public static final Quotas NONE = new Quotas(0, 0);

  public Quotas {
    if (newKeysPerMinute < 0 || liveRecords < 0) {
      // Not "+ this": in a compact constructor the fields are not assigned yet, so it read 0, 0.
      throw new IllegalArgumentException(
          "Quotas are 0 (no limit) or positive: newKeysPerMinute="
              + newKeysPerMinute
              + ", liveRecords="
              + liveRecords);
    }
  }

  public boolean enabled() {
    return newKeysPerMinute > 0 || liveRecords > 0;
  }
}
