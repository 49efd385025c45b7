package dev.idemkit.spring.boot;

import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.QuotaSync;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The quota exchange of a store on shards ({@link TenantShards}): the instances' new-key counts are
 * shared through one shard (the directory's, or with regions the first of this instance's region
 * when the directory is elsewhere), and the live records are counted on every shard this instance
 * serves, each tenant's where its records are. Without it, the exchange ran on that one shard only
 * and counted no live record of the other shards' tenants, so their {@code live-records-per-tenant}
 * quota held only within one instance.
 *
 * <p>One exchange is the store's exchange on the counts' shard, then a read-only one (no new key to
 * write) on each other shard; a shard that cannot be read fails the whole exchange, and admissions
 * go on with the last counts read (never with a tenant's live records left out).
 */
final class ShardedQuotaSync implements QuotaSync {

  private final QuotaSync store;
  private final TenantShards shards;
  private final String countsShard;
  private final List<String> others;

  /**
   * @param countsShard where the instances' new keys are shared; one of {@code shards.local()}
   */
  ShardedQuotaSync(QuotaSync store, TenantShards shards, String countsShard) {
    this.store = store;
    this.shards = shards;
    this.countsShard = countsShard;
    this.others = shards.local().stream().filter(s -> !s.equals(countsShard)).toList();
  }

  /**
   * The shard the instances of this region share their new-key counts through: the directory's when
   * this instance serves it, else the first it serves; null when it serves none.
   */
  static String countsShard(TenantShards shards, String directoryShard) {
    List<String> local = shards.local();
    return local.contains(directoryShard) ? directoryShard : local.isEmpty() ? null : local.get(0);
  }

  /** {@code store} with this exchange in place of its own, when it has one. */
  static IdempotencyStore wrap(IdempotencyStore store, TenantShards shards, String countsShard) {
    return new ForwardingIdempotencyStore(store) {
      @Override
      public <T> Optional<T> capability(Class<T> type) {
        Optional<T> own = super.capability(type);
        if (type != QuotaSync.class || own.isEmpty() || countsShard == null) {
          return own;
        }
        return Optional.of(
            type.cast(new ShardedQuotaSync((QuotaSync) own.get(), shards, countsShard)));
      }
    };
  }

  @Override
  public SharedQuotaCounts exchange(String instance, Instant minute, Map<String, Integer> newKeys) {
    SharedQuotaCounts shared = on(countsShard, instance, minute, newKeys);
    if (others.isEmpty()) {
      return shared;
    }
    Map<String, LiveRecords> live = new HashMap<>(shared.live());
    for (String shard : others) {
      // A tenant's records are on one shard; added up all the same, for a tenant whose move left
      // its rows on both for a moment.
      on(shard, instance, minute, Map.of())
          .live()
          .forEach(
              (tenant, records) ->
                  live.merge(
                      tenant,
                      records,
                      (a, b) ->
                          new LiveRecords(a.live() + b.live(), a.escalated() + b.escalated())));
    }
    return new SharedQuotaCounts(shared.now(), shared.othersNewKeys(), live);
  }

  private SharedQuotaCounts on(
      String shard, String instance, Instant minute, Map<String, Integer> newKeys) {
    try {
      return shards.on(shard, () -> store.exchange(instance, minute, newKeys));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Quota exchange on shard " + shard + " failed", e);
    }
  }
}
