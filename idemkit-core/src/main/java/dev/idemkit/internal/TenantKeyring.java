package dev.idemkit.internal;

import dev.idemkit.spi.DataKeyStore;
import dev.idemkit.spi.KeyProvider;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.WrappedDataKey;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Tenant data keys: created on a tenant's first sealed answer, wrapped by the current master key,
 * kept unwrapped in memory for a short time so that sealing and opening cost no key round trip. Not
 * API.
 *
 * <p>Two processes may create a tenant's first key at the same moment; both keys are stored and
 * both work (each envelope names its key), and the newest seals from then on. No lock is needed.
 */
public final class TenantKeyring {

  private static final SecureRandom RANDOM = new SecureRandom();

  /** A data key ready to use. */
  public record DataKey(String id, SecretKey key) {}

  private record Cached<T>(T value, Instant until) {}

  private final KeyProvider master;
  private final DataKeyStore store;
  private final Duration ttl;
  private final Clock clock;
  private final ConcurrentHashMap<String, Cached<DataKey>> current = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Cached<DataKey>> byId = new ConcurrentHashMap<>();

  public TenantKeyring(KeyProvider master, DataKeyStore store, Duration ttl, Clock clock) {
    this.master = master;
    this.store = store;
    this.ttl = ttl;
    this.clock = clock;
  }

  /**
   * The key new answers of {@code tenant} are sealed with; made on first use, in {@code tx}.
   *
   * <p>Keys are read and made on the caller's transaction, never on a second connection: with every
   * pooled connection held by a request, a second one would never come. A key made in {@code tx} is
   * not cached (the transaction may still roll back); requests racing for a new tenant's first key
   * may each make one, and all of them work, since each envelope names its key.
   */
  public DataKey current(StoreTransaction tx, String tenant) {
    Instant now = clock.instant();
    Cached<DataKey> cached = current.get(tenant);
    if (cached != null && now.isBefore(cached.until())) {
      return cached.value();
    }
    Optional<DataKey> stored = store.current(tx, tenant).map(this::unwrap);
    if (stored.isEmpty()) {
      return create(tx, tenant);
    }
    DataKey key = stored.get();
    current.put(tenant, new Cached<>(key, now.plus(ttl)));
    byId.put(cacheKey(tenant, key.id()), new Cached<>(key, now.plus(ttl)));
    return key;
  }

  /** The tenant's key {@code keyId}, or empty if it was destroyed (or never existed). */
  public Optional<DataKey> find(StoreTransaction tx, String tenant, String keyId) {
    Instant now = clock.instant();
    Cached<DataKey> cached = byId.get(cacheKey(tenant, keyId));
    if (cached != null && now.isBefore(cached.until())) {
      return Optional.of(cached.value());
    }
    Optional<DataKey> key = store.find(tx, tenant, keyId).map(this::unwrap);
    key.ifPresent(k -> byId.put(cacheKey(tenant, keyId), new Cached<>(k, now.plus(ttl))));
    return key;
  }

  public String rotate(String tenant) {
    DataKey key = create(null, tenant);
    current.remove(tenant);
    return key.id();
  }

  public int shred(String tenant) {
    int destroyed = store.destroy(tenant);
    current.remove(tenant);
    byId.keySet().removeIf(k -> k.startsWith(tenant + "\u0000"));
    return destroyed;
  }

  public int rewrap(String oldMasterKeyId) {
    String now = master.currentKeyId();
    int rewrapped = 0;
    for (WrappedDataKey key : store.all()) {
      if (!key.masterKeyId().equals(oldMasterKeyId) || oldMasterKeyId.equals(now)) {
        continue;
      }
      byte[] context = context(key.tenant(), key.keyId());
      byte[] plain = master.unwrap(key.masterKeyId(), key.wrapped(), context);
      store.rewrap(key.tenant(), key.keyId(), now, master.wrap(now, plain, context));
      rewrapped++;
    }
    return rewrapped;
  }

  /** How many data keys of one master key {@link #masterKeysThatDoNotUnwrap} tries at most. */
  private static final int KEYS_TRIED_PER_MASTER_KEY = 3;

  /**
   * The master keys none of whose first few data keys unwrap. Reads every wrapped key once (a few
   * per tenant): a start-up check, not a per-request one.
   */
  public Set<String> masterKeysThatDoNotUnwrap() {
    Map<String, List<WrappedDataKey>> byMasterKey = new TreeMap<>();
    for (WrappedDataKey key : store.all()) {
      List<WrappedDataKey> tried =
          byMasterKey.computeIfAbsent(key.masterKeyId(), id -> new ArrayList<>());
      if (tried.size() < KEYS_TRIED_PER_MASTER_KEY) {
        tried.add(key);
      }
    }
    Set<String> failing = new TreeSet<>();
    byMasterKey.forEach(
        (masterKeyId, keys) -> {
          if (keys.stream().noneMatch(this::unwraps)) {
            failing.add(masterKeyId);
          }
        });
    return failing;
  }

  private boolean unwraps(WrappedDataKey key) {
    try {
      unwrap(key);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private DataKey create(StoreTransaction tx, String tenant) {
    byte[] raw = new byte[32];
    RANDOM.nextBytes(raw);
    byte[] id = new byte[8];
    RANDOM.nextBytes(id);
    String keyId = "dk_" + HexFormat.of().formatHex(id);
    String masterId = master.currentKeyId();
    store.insert(
        tx,
        new WrappedDataKey(
            tenant,
            keyId,
            masterId,
            master.wrap(masterId, raw, context(tenant, keyId)),
            clock.instant()));
    return new DataKey(keyId, new SecretKeySpec(raw, "AES"));
  }

  private DataKey unwrap(WrappedDataKey wrapped) {
    byte[] raw =
        master.unwrap(
            wrapped.masterKeyId(), wrapped.wrapped(), context(wrapped.tenant(), wrapped.keyId()));
    return new DataKey(wrapped.keyId(), new SecretKeySpec(raw, "AES"));
  }

  /** A wrapped key only unwraps as the key of its own tenant and id. */
  private static byte[] context(String tenant, String keyId) {
    return ("idemkit-data-key\u0000" + tenant + "\u0000" + keyId).getBytes(StandardCharsets.UTF_8);
  }

  private static String cacheKey(String tenant, String keyId) {
    return tenant + "\u0000" + keyId;
  }
}
