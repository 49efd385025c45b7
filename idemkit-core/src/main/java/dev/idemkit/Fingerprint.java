package dev.idemkit;

import dev.idemkit.internal.CanonicalJson;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The fingerprint of a command: a hash that tells whether a retry carries the same request as the
 * attempt that first used its idempotency key.
 *
 * <p>The hash is a contract. Version {@code v1} is SHA-256 over the UTF-8 bytes of the RFC 8785
 * canonical JSON of the command (JCS: object keys sorted, each number written as ECMAScript prints
 * its double). Fingerprints are stored next to the records they protect, possibly for a long time,
 * so a recipe must not change; a new recipe gets a new version. Because the version (and, for a
 * keyed recipe, the key id) is stored with the digest, a retry is compared using the recipe its
 * record was made with ({@link FingerprintRecipes}), so a changed recipe or a rotated key never
 * makes the retry of an old request look like a different request.
 *
 * <p>Text forms, returned by {@link #toString()} and read by {@link #parse(String)}: {@code
 * v1:sha256:<64 lowercase hex digits>}, and for a keyed recipe (HMAC-SHA-256 with key {@code kid})
 * {@code v2:hmac-sha256:<kid>:<64 lowercase hex digits>}. Versions are {@code v} and a number.
 *
 * @param version the recipe version ({@code v1}, {@code v2}, ...)
 * @param algorithm {@code sha256}, or {@code hmac-sha256} for a keyed recipe
 * @param digest the hash as 64 lowercase hexadecimal digits
 * @param keyId the HMAC key's id for {@code hmac-sha256}, {@code null} for {@code sha256}
 */
public record Fingerprint(String version, String algorithm, String digest, String keyId) {

  /** The plain recipe: SHA-256 of the canonical JSON. */
  public static final String V1 = "v1";

  /** The hash algorithm of {@link #V1}. */
  public static final String SHA256 = "sha256";

  /** The keyed hash algorithm: HMAC-SHA-256 with a key named by {@link #keyId()}. */
  public static final String HMAC_SHA256 = "hmac-sha256";

  private static final int DIGEST_HEX_LENGTH = 64;

  // Compiled once: every request makes a fingerprint and every record read parses one.
  private static final Pattern VERSION = Pattern.compile("v[1-9][0-9]{0,5}");

  private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /**
   * Validates the components.
   *
   * @throws IllegalArgumentException if the version is not {@code v<number>}, the algorithm not
   *     {@code sha256} or {@code hmac-sha256}, the key id missing for (or given to) a keyed (plain)
   *     hash, or the digest not 64 lowercase hex digits
   */
  public Fingerprint {
    if (version == null || !VERSION.matcher(version).matches()) {
      throw new IllegalArgumentException(
          "unsupported fingerprint version " + quote(version) + ", expected v1, v2, ...");
    }
    if (SHA256.equals(algorithm)) {
      if (keyId != null) {
        throw new IllegalArgumentException("a sha256 fingerprint has no key id");
      }
    } else if (HMAC_SHA256.equals(algorithm)) {
      if (keyId == null || !KEY_ID.matcher(keyId).matches()) {
        throw new IllegalArgumentException(
            "an hmac-sha256 fingerprint needs a key id of 1-64 letters, digits, '_', '.', '-',"
                + " got "
                + quote(keyId));
      }
    } else {
      throw new IllegalArgumentException(
          "unsupported fingerprint algorithm "
              + quote(algorithm)
              + ", expected \""
              + SHA256
              + "\" or \""
              + HMAC_SHA256
              + "\"");
    }
    if (!isLowercaseHex(digest, DIGEST_HEX_LENGTH)) {
      throw new IllegalArgumentException(
          "fingerprint digest must be "
              + DIGEST_HEX_LENGTH
              + " lowercase hex digits, got "
              + quote(digest));
    }
  }

  /** A plain (unkeyed) fingerprint. */
  public Fingerprint(String version, String algorithm, String digest) {
    this(version, algorithm, digest, null);
  }

  /** Whether {@code other} was made with the same recipe and key (so digests are comparable). */
  public boolean sameRecipeAs(Fingerprint other) {
    return version.equals(other.version)
        && algorithm.equals(other.algorithm)
        && java.util.Objects.equals(keyId, other.keyId);
  }

  /**
   * Computes the {@code v1} fingerprint of a command.
   *
   * @param canonicalCommand the command as a value tree: {@code null}, {@link Boolean}, {@link
   *     CharSequence}, {@link java.util.Map} with {@link String} keys, {@link java.util.List}, and
   *     numbers whose value a double reproduces exactly (pass other amounts as strings)
   * @return SHA-256 over the command's canonical JSON bytes
   * @throws IllegalArgumentException if the command has no canonical JSON form
   */
  public static Fingerprint of(Object canonicalCommand) {
    byte[] bytes = CanonicalJson.canonicalBytes(canonicalCommand);
    MessageDigest sha256 = SHA256_DIGEST.get();
    sha256.reset();
    return new Fingerprint(V1, SHA256, HexFormat.of().formatHex(sha256.digest(bytes)));
  }

  /**
   * One SHA-256 digest per thread: {@link MessageDigest#getInstance} looks the algorithm up among
   * the security providers on every call, a cost on every request.
   */
  private static final ThreadLocal<MessageDigest> SHA256_DIGEST =
      ThreadLocal.withInitial(
          () -> {
            try {
              return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
              throw new IllegalStateException("SHA-256 is required on every Java platform", e);
            }
          });

  /**
   * Reads the text form {@code v1:sha256:<hex>}.
   *
   * @param text a fingerprint as produced by {@link #toString()}
   * @return the fingerprint
   * @throws IllegalArgumentException if {@code text} is {@code null} or not a valid fingerprint
   */
  public static Fingerprint parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("fingerprint text is null");
    }
    String[] parts = text.split(":", -1);
    if (parts.length == 4 && HMAC_SHA256.equals(parts[1])) {
      return new Fingerprint(parts[0], parts[1], parts[3], parts[2]);
    }
    if (parts.length != 3 || !SHA256.equals(parts[1])) {
      throw new IllegalArgumentException(
          "fingerprint must have the form v1:sha256:<hex> or v2:hmac-sha256:<kid>:<hex>, got "
              + quote(text));
    }
    return new Fingerprint(parts[0], parts[1], parts[2]);
  }

  /**
   * Returns the text form {@code v1:sha256:<hex>} or {@code v2:hmac-sha256:<kid>:<hex>}, which
   * {@link #parse(String)} reads back.
   */
  @Override
  public String toString() {
    return keyId == null
        ? version + ':' + algorithm + ':' + digest
        : version + ':' + algorithm + ':' + keyId + ':' + digest;
  }

  private static boolean isLowercaseHex(String s, int length) {
    if (s == null || s.length() != length) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  private static String quote(String s) {
    return s == null ? "null" : "\"" + abbreviate(s) + "\"";
  }

  private static String abbreviate(String s) {
    return s.length() <= 100 ? s : s.substring(0, 100) + "...";
  }
}
