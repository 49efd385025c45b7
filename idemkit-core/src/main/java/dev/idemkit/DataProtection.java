package dev.idemkit;

import dev.idemkit.internal.ProtectedStore;
import dev.idemkit.internal.TenantKeyring;
import dev.idemkit.spi.DataKeyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.KeyProvider;
import dev.idemkit.spi.ReferenceResolver;
import dev.idemkit.spi.ResponseRedactor;
import dev.idemkit.spi.ResponseUpcaster;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How stored answers and recovery data are treated as sensitive data: encrypted at rest, redacted,
 * kept by reference, upcast across schema versions. Every option is off by default; {@link
 * #protect(IdempotencyStore)} wraps a store so the engine sees plain answers and the store only
 * ever holds what this allows. Immutable and thread-safe; build with {@link #builder()}. The
 * contract, costs and threat model are in the repository's {@code docs/data-protection.md}.
 *
 * <pre>{@code
 * DataProtection protection = DataProtection.builder()
 *     .encryption(StaticKeyProvider.ofBase64(masterKeys, "mk1"), new PostgresDataKeyStore(ds))
 *     .redact("create_payment", JsonFieldRedactor.of(List.of("card.cvc"), List.of("card.number")))
 *     .replayByReference("create_order", "order", orders::rebuildAnswer)
 *     .build();
 * Idempotency idempotency = Idempotency.create(protection.protect(store), config);
 * }</pre>
 */
public final class DataProtection {

  private final TenantKeyring keyring;
  private final boolean sealsNewAnswers;
  private final Map<String, ResponseRedactor> redactors;
  private final Map<String, ReplayMode> modes;
  private final Map<String, String> resourceTypes;
  private final Map<String, ReferenceResolver> resolvers;
  private final Map<String, ResponseUpcaster> upcasters;

  private DataProtection(Builder b) {
    this.keyring =
        b.keys == null ? null : new TenantKeyring(b.keys, b.dataKeys, b.keyCacheTtl, b.clock);
    this.sealsNewAnswers = b.sealsNewAnswers;
    this.redactors = Map.copyOf(b.redactors);
    this.modes = Map.copyOf(b.modes);
    this.resourceTypes = Map.copyOf(b.resourceTypes);
    this.resolvers = Map.copyOf(b.resolvers);
    this.upcasters = Map.copyOf(b.upcasters);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Nothing: answers are stored and replayed as they are. */
  public static DataProtection none() {
    return builder().build();
  }

  /**
   * Wraps {@code store}: what goes in is redacted, reduced and encrypted; what comes out is not.
   */
  public IdempotencyStore protect(IdempotencyStore store) {
    return new ProtectedStore(store, this, keyring, sealsNewAnswers);
  }

  /** Whether new answers and recovery data are sealed ({@link Builder#encryption}). */
  public boolean encrypts() {
    return keyring != null && sealsNewAnswers;
  }

  /**
   * Whether answers and recovery data sealed earlier can be opened: with {@link
   * Builder#encryption}, and with {@link Builder#decryptOnly} (encryption turned off).
   */
  public boolean decrypts() {
    return keyring != null;
  }

  public ReplayMode replayMode(String operation) {
    return modes.getOrDefault(operation, ReplayMode.BODY);
  }

  public String resourceType(String operation) {
    return resourceTypes.get(operation);
  }

  public ReferenceResolver resolver(String operation) {
    return resolvers.get(operation);
  }

  public ResponseRedactor redactor(String operation) {
    return redactors.get(operation);
  }

  public ResponseUpcaster upcaster(String operation, int fromVersion) {
    return upcasters.get(operation + "\u0000" + fromVersion);
  }

  /**
   * Gives the tenant a new data key for new answers; answers sealed with its older keys still
   * replay (their key id is stored with them). Other processes move to the new key within the key
   * cache time.
   *
   * @return the new key's id
   * @throws IllegalStateException if encryption is off (also in {@link Builder#decryptOnly} mode: a
   *     new key would seal nothing)
   */
  public String rotateTenantKey(String tenant) {
    if (!encrypts()) {
      throw new IllegalStateException("Encryption is off: new answers are sealed with no data key");
    }
    return requireKeyring().rotate(tenant);
  }

  /**
   * Crypto-shredding: destroys every data key of the tenant. Its stored answers and recovery data
   * become unreadable for good (a replay answers {@code IDEMPOTENCY_RECORD_UNREADABLE}, never runs
   * the operation again). Other processes stop reading them within the key cache time.
   *
   * @return how many keys were destroyed
   */
  public int shredTenant(String tenant) {
    return requireKeyring().shred(tenant);
  }

  /**
   * After a master key rotation: re-wraps under the current master key every data key wrapped by
   * {@code oldMasterKeyId}, so that key can be removed from configuration (or disabled in the KMS).
   * The data keys, and so the stored answers, do not change.
   *
   * @return how many keys were re-wrapped
   */
  public int rewrapDataKeys(String oldMasterKeyId) {
    return requireKeyring().rewrap(oldMasterKeyId);
  }

  /**
   * The master keys that wrap stored data keys but do not unwrap them: a key configured under its
   * id with another value (or a KMS key that refuses). Each master key in use is tried on a few of
   * its data keys, and fails only if none of them unwraps, so one damaged data key does not count
   * against it. Meant for start-up: without it, such a key is found by the first request of each of
   * its tenants (an answer that cannot be read, a new request that fails).
   *
   * @return the failing master key ids, sorted; empty if every one unwraps, or if encryption is off
   */
  public Set<String> masterKeysThatDoNotUnwrap() {
    return keyring == null ? Set.of() : keyring.masterKeysThatDoNotUnwrap();
  }

  private TenantKeyring requireKeyring() {
    if (keyring == null) {
      throw new IllegalStateException("Encryption is off: there are no data keys");
    }
    return keyring;
  }

  /** Builds {@link DataProtection}; everything is off unless set. */
  public static final class Builder {
    private KeyProvider keys;
    private DataKeyStore dataKeys;
    private boolean sealsNewAnswers;
    private Duration keyCacheTtl = Duration.ofMinutes(1);
    private java.time.Clock clock = java.time.Clock.systemUTC();
    private final Map<String, ResponseRedactor> redactors = new HashMap<>();
    private final Map<String, ReplayMode> modes = new HashMap<>();
    private final Map<String, String> resourceTypes = new HashMap<>();
    private final Map<String, ReferenceResolver> resolvers = new HashMap<>();
    private final Map<String, ResponseUpcaster> upcasters = new HashMap<>();

    private Builder() {}

    /**
     * Encrypts stored answers and recovery data with AES-256-GCM, one data key per tenant, data
     * keys wrapped by {@code masterKeys} and kept in {@code dataKeys}.
     */
    public Builder encryption(KeyProvider masterKeys, DataKeyStore dataKeys) {
      this.keys = Objects.requireNonNull(masterKeys);
      this.dataKeys = Objects.requireNonNull(dataKeys);
      this.sealsNewAnswers = true;
      return this;
    }

    /**
     * Encryption turned off without losing what it sealed: new answers and recovery data are stored
     * in the clear, and answers and recovery data sealed earlier are still opened with the tenants'
     * data keys, unwrapped by {@code masterKeys}. Keep it until every sealed answer has passed its
     * window and been cleaned up; without it such an answer's replay fails ({@link
     * RecordUnreadableException}, reason {@code KEY_UNAVAILABLE}), and the operation is not run
     * again. Crypto-shredding and re-wrapping still work; no new data key is made.
     */
    public Builder decryptOnly(KeyProvider masterKeys, DataKeyStore dataKeys) {
      this.keys = Objects.requireNonNull(masterKeys);
      this.dataKeys = Objects.requireNonNull(dataKeys);
      this.sealsNewAnswers = false;
      return this;
    }

    /**
     * How long a process keeps a data key unwrapped in memory (default one minute): the bound on
     * how long another process may still read a shredded tenant's answers, or seal with a rotated
     * key.
     */
    public Builder keyCacheTtl(Duration ttl) {
      this.keyCacheTtl = Objects.requireNonNull(ttl);
      return this;
    }

    /** The clock the key cache expires by. */
    public Builder clock(java.time.Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    /** Redacts the answers of {@code operation} before they are stored. */
    public Builder redact(String operation, ResponseRedactor redactor) {
      redactors.merge(
          operation,
          Objects.requireNonNull(redactor),
          (a, b) -> (id, r) -> b.redact(id, a.redact(id, r)));
      return this;
    }

    /** Keeps only status, headers and resource id of {@code operation}'s successful answers. */
    public Builder replayOutcome(String operation) {
      modes.put(operation, ReplayMode.OUTCOME);
      return this;
    }

    /**
     * Keeps only the created resource's type and id of {@code operation}'s successful answers, and
     * rebuilds replays with {@code resolver}. The id is the answer's {@link
     * StoredResponse#resourceId()}, or the last segment of its {@code Location}; an answer with
     * neither is kept as its body.
     */
    public Builder replayByReference(
        String operation, String resourceType, ReferenceResolver resolver) {
      modes.put(operation, ReplayMode.REFERENCE);
      resourceTypes.put(operation, Objects.requireNonNull(resourceType));
      resolvers.put(operation, Objects.requireNonNull(resolver));
      return this;
    }

    /**
     * Upcasts {@code operation}'s stored answers of schema version {@code fromVersion} to the next
     * version when they are replayed.
     */
    public Builder upcaster(String operation, int fromVersion, ResponseUpcaster upcaster) {
      upcasters.put(operation + "\u0000" + fromVersion, Objects.requireNonNull(upcaster));
      return this;
    }

    public DataProtection build() {
      return new DataProtection(this);
    }
  }
}
