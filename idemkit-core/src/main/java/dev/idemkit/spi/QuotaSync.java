package dev.idemkit.spi;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A store capability ({@link IdempotencyStore#capability}): how instances share their quota counts
 * through the store, in the background. Each instance decides every admission in memory ({@link
 * dev.idemkit.Quotas}) and, about once a second, calls {@link #exchange} to write its own counts
 * and read what the others wrote. Quotas need it: {@link dev.idemkit.Idempotency#create} refuses a
 * configuration with quotas on a store that lacks it.
 */
public interface QuotaSync {

  /**
   * Writes this instance's counts and reads the shared ones. Writes only the rows of {@code
   * instance}: its new keys per tenant in {@code minute}, as totals (a repeated exchange writes the
   * same rows again). Reads, per tenant, the new keys the other instances wrote for {@code minute}
   * and the live records in the store now (phased operations in progress or awaiting recovery,
   * escalated ones included), and the store's time, the clock every instance counts minutes on.
   *
   * @param instance this instance's id, the same for all its exchanges
   * @param minute the minute {@code newKeys} were counted in (whole minute)
   * @param newKeys this instance's new keys per tenant in {@code minute}, tenants with none left
   *     out
   */
  SharedQuotaCounts exchange(String instance, Instant minute, Map<String, Integer> newKeys);

  /**
   * What an exchange read.
   *
   * @param now the store's time during the exchange
   * @param othersNewKeys per tenant, the new keys the other instances wrote for the exchange's
   *     minute (a tenant with none is absent)
   * @param live per tenant, its live records (a tenant with none is absent)
   */
  record SharedQuotaCounts(
      Instant now, Map<String, Integer> othersNewKeys, Map<String, LiveRecords> live) {

    public SharedQuotaCounts {
      Objects.requireNonNull(now);
      othersNewKeys = Map.copyOf(othersNewKeys);
      live = Map.copyOf(live);
    }
  }

  /**
   * A tenant's live records in the store.
   *
   * @param live in progress, awaiting recovery or escalated
   * @param escalated of those, escalated to an operator (only a resolution frees their place)
   */
  record LiveRecords(int live, int escalated) {}
}
