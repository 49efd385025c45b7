package dev.idemkit;

/**
 * Per-tenant limits on new keys. A retry of a key that has a record is never refused.
 *
 * <p>Each instance decides a new key's admission in memory, with no statement: against its own
 * counts, exact, and the other instances' counts as of its last exchange ({@link
 * Idempotency#syncQuotas()}, about once a second in the background; each instance writes only its
 * own rows). Alone, an instance admits exactly the limits. Across instances the limits can be
 * overshot by what the others admitted since this instance last heard of them. With a sync interval
 * {@code I} (the starter's {@code idemkit.quota.sync-interval}, 1 s):
 *
 * <ul>
 *   <li>new keys of a tenant in a minute (of the store's clock) stay at most {@code
 *       newKeysPerMinute} plus, for each other instance, the new keys of that tenant it admitted in
 *       two sync intervals ({@code 2 I}: one until it writes its count, one until this instance
 *       reads it);
 *   <li>live records of a tenant stay at most {@code liveRecords} plus, for each other instance,
 *       the tenant's phased operations it admitted in one sync interval ({@code I}, plus the
 *       exchange's own duration): the store counts committed live records, read by each exchange.
 * </ul>
 *
 * A record that stopped being live keeps its place until the next exchange (refusing a little
 * early, never late). See docs/contract.md, "Quotas".
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
