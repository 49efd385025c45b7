package dev.idemkit;

import dev.idemkit.internal.CanonicalJson;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The fingerprint recipes an application has ever used, by version, and the one it uses now.
 * Immutable and thread-safe; build with {@link #builder()}.
 *
 * <p>A recipe is a canonical form (a function from the command's value tree to the tree that is
 * hashed) and a hash: plain SHA-256, or HMAC-SHA-256 with a key named by its id. Built in: {@code
 * v1} (the tree as it is, SHA-256: {@link Fingerprint#of(Object)}) and {@code v2} (the tree as it
 * is, HMAC-SHA-256 with the current fingerprint key). A record keeps the fingerprint it was made
 * with, version and key id included, and a retry is compared by {@link #recompute(Object,
 * Fingerprint)}: the retry's command under <em>that record's</em> recipe and key. So a deploy that
 * adds a field with a default (register the old form under its version, make a new version
 * current), a move from plain to keyed hashes, or a rotated HMAC key never turns an in-window retry
 * into a mismatch. Keep a recipe and an HMAC key registered for as long as the longest expiry
 * window after it stops being current; a record whose recipe or key is gone can only mismatch.
 *
 * <p>Why keyed: a plain hash of a command that holds a card number can be brute-forced (PCI DSS v4
 * 3.5.1.1 asks for keyed hashes); an HMAC cannot without its key.
 */
public final class FingerprintRecipes {

  /** The keyed built-in recipe: the tree as it is, HMAC-SHA-256. */
  public static final String V2 = "v2";

  private final Map<String, Recipe> recipes;
  private final String current;
  private final Map<String, byte[]> hmacKeys;
  private final String currentHmacKey;

  private record Recipe(UnaryOperator<Object> canonicalForm, boolean keyed) {}

  private FingerprintRecipes(Builder b) {
    this.recipes = Map.copyOf(b.recipes);
    this.current = b.current;
    Map<String, byte[]> keys = new LinkedHashMap<>();
    b.hmacKeys.forEach((k, v) -> keys.put(k, v.clone()));
    this.hmacKeys = Map.copyOf(keys);
    this.currentHmacKey = b.currentHmacKey;
    Recipe now = recipes.get(current);
    if (now == null) {
      throw new IllegalArgumentException("current fingerprint recipe " + current + " is unknown");
    }
    if (now.keyed() && (currentHmacKey == null || !hmacKeys.containsKey(currentHmacKey))) {
      throw new IllegalArgumentException(
          "fingerprint recipe " + current + " is keyed: set a current HMAC key that is registered");
    }
  }

  /** Only {@code v1}: plain SHA-256, the default. */
  public static FingerprintRecipes plain() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The current recipe's version. */
  public String current() {
    return current;
  }

  /** The fingerprint of {@code command} (a value tree) under the current recipe and key. */
  public Fingerprint fingerprint(Object command) {
    Recipe recipe = recipes.get(current);
    return compute(current, recipe, command, recipe.keyed() ? currentHmacKey : null);
  }

  /**
   * The fingerprint of {@code command} under the recipe and key {@code stored} was made with, to
   * compare with it; empty if that recipe or key is not registered (any more).
   */
  public Optional<Fingerprint> recompute(Object command, Fingerprint stored) {
    Recipe recipe = recipes.get(stored.version());
    if (recipe == null) {
      return Optional.empty();
    }
    boolean keyed = Fingerprint.HMAC_SHA256.equals(stored.algorithm());
    if (keyed != recipe.keyed() || (keyed && !hmacKeys.containsKey(stored.keyId()))) {
      return Optional.empty();
    }
    return Optional.of(compute(stored.version(), recipe, command, stored.keyId()));
  }

  /**
   * The request for {@code command}: the current fingerprint, and a retry compared under each
   * record's own recipe.
   */
  public IdempotentRequest request(ScopedKey id, Object command, java.time.Duration ttl) {
    return new IdempotentRequest(
        id, fingerprint(command), ttl, stored -> recompute(command, stored));
  }

  private Fingerprint compute(String version, Recipe recipe, Object command, String keyId) {
    Object form = recipe.canonicalForm().apply(command);
    if (keyId == null) {
      Fingerprint plain = Fingerprint.of(form);
      return new Fingerprint(version, Fingerprint.SHA256, plain.digest());
    }
    byte[] bytes = CanonicalJson.canonicalBytes(form);
    Mac mac = macs.get().computeIfAbsent(keyId, this::newMac);
    // doFinal leaves the Mac initialised with its key, ready for the next command of this thread.
    return new Fingerprint(
        version, Fingerprint.HMAC_SHA256, HexFormat.of().formatHex(mac.doFinal(bytes)), keyId);
  }

  /**
   * Each thread's HMAC-SHA256 instances, one per key id: looking the algorithm up among the
   * security providers and setting up the key cost more than hashing a command. A {@link Mac} is
   * not thread safe, so none is shared between threads.
   */
  private final ThreadLocal<Map<String, Mac>> macs = ThreadLocal.withInitial(HashMap::new);

  private Mac newMac(String keyId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(hmacKeys.get(keyId), "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required on every Java platform", e);
    }
  }

  /** Builds {@link FingerprintRecipes}; {@code v1} and {@code v2} are registered already. */
  public static final class Builder {
    private final Map<String, Recipe> recipes = new LinkedHashMap<>();
    private final Map<String, byte[]> hmacKeys = new LinkedHashMap<>();
    private String current = Fingerprint.V1;
    private String currentHmacKey;

    private Builder() {
      recipes.put(Fingerprint.V1, new Recipe(UnaryOperator.identity(), false));
      recipes.put(V2, new Recipe(UnaryOperator.identity(), true));
    }

    /**
     * Registers a recipe: {@code canonicalForm} maps the command's value tree to what is hashed
     * (e.g. the tree without a field added later, when it holds its default). Registering {@code
     * v1} or {@code v2} again replaces their form (their hash stays): that is how a deploy that
     * adds a field keeps old records' retries comparable.
     */
    public Builder recipe(String version, UnaryOperator<Object> canonicalForm, boolean keyed) {
      if ((Fingerprint.V1.equals(version) && keyed) || (V2.equals(version) && !keyed)) {
        throw new IllegalArgumentException(
            version
                + " is built in "
                + (keyed ? "unkeyed" : "keyed")
                + "; only its form may change");
      }
      new Fingerprint(version, Fingerprint.SHA256, "0".repeat(64)); // validates the version
      recipes.put(version, new Recipe(Objects.requireNonNull(canonicalForm), keyed));
      return this;
    }

    /** The recipe new records are made with. */
    public Builder current(String version) {
      this.current = Objects.requireNonNull(version);
      return this;
    }

    /** Registers an HMAC key (at least 32 bytes) under {@code keyId}. */
    public Builder hmacKey(String keyId, byte[] key) {
      new Fingerprint(V2, Fingerprint.HMAC_SHA256, "0".repeat(64), keyId); // validates the id
      if (key == null || key.length < 32) {
        throw new IllegalArgumentException("an HMAC key must have at least 32 bytes");
      }
      hmacKeys.put(keyId, Arrays.copyOf(key, key.length));
      return this;
    }

    /** The HMAC key keyed recipes use for new records. */
    public Builder currentHmacKey(String keyId) {
      this.currentHmacKey = Objects.requireNonNull(keyId);
      return this;
    }

    public FingerprintRecipes build() {
      return new FingerprintRecipes(this);
    }
  }
}
