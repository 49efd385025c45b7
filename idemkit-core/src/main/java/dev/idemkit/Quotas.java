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
 * @param concurrentRequests most requests of one tenant this instance runs at once (a bulkhead: a
 *     request holds its place from before its first statement until its answer, provider calls
 *     included, so one tenant never holds more than this many of the instance's connections); one
 *     more waits up to {@link #CONCURRENT_WAIT} for a place, then is refused ({@code
 *     concurrent_requests}, Retry-After 1 s) with no statement; 0: no limit. Counted per instance,
 *     exact, nothing shared.
 */
public record Quotas(int newKeysPerMinute, int liveRecords, int concurrentRequests) {

  public static final Quotas NONE = new Quotas(0, 0, 0);

  /**
   * How long a request over {@code concurrentRequests} waits for one of its tenant's places before
   * it is refused. Waiting, it uses no CPU and no connection; a flood at a fixed concurrency then
   * runs at the pace its places allow instead of spinning on refusals.
   */
  public static final java.time.Duration CONCURRENT_WAIT = java.time.Duration.ofSeconds(1);

  /** New keys and live records only, no limit on concurrent requests. */
  public Quotas(int newKeysPerMinute, int liveRecords) {
    this(newKeysPerMinute, liveRecords, 0);
  }

  public Quotas {
    if (newKeysPerMinute < 0 || liveRecords < 0 || concurrentRequests < 0) {
      // Not "+ this": in a compact constructor the fields are not assigned yet, so it read 0, 0.
      throw new IllegalArgumentException(
          "Quotas are 0 (no limit) or positive: newKeysPerMinute="
              + newKeysPerMinute
              + ", liveRecords="
              + liveRecords
              + ", concurrentRequests="
              + concurrentRequests);
    }
  }

  /**
   * Whether a counted quota (new keys, live records) is set: those need the store's {@link
   * dev.idemkit.spi.QuotaSync}. The concurrency limit needs nothing from the store.
   */
  public boolean enabled() {
    return newKeysPerMinute > 0 || liveRecords > 0;
  }
}
