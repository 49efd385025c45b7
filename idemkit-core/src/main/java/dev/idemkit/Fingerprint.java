package dev.idemkit;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The fingerprint of a command: a hash that tells whether a retry carries the same request as the
 * attempt that first used its idempotency key.
 *
 * <p>The hash is a contract. Version {@code v1} is SHA-256 over the UTF-8 bytes of the RFC 8785
 * canonical JSON of the command ({@link CanonicalJson#canonicalBytes(Object)}). Fingerprints are
 * stored next to the records they protect, possibly for a long time, so this recipe must not
 * change; a new recipe gets a new version. Because the version is stored with the digest, a changed
 * recipe never silently makes the retry of an old request look like a different request.
 *
 * <p>The text form, returned by {@link #toString()} and read by {@link #parse(String)}, is {@code
 * v1:sha256:<64 lowercase hex digits>}.
 *
 * @param version the recipe version; only {@code v1} exists
 * @param algorithm the hash algorithm; {@code sha256} for {@code v1}
 * @param digest the hash as 64 lowercase hexadecimal digits
 */
public record Fingerprint(String version, String algorithm, String digest) {

  /** The only recipe version so far. */
  public static final String V1 = "v1";

  /** The hash algorithm of {@link #V1}. */
  public static final String SHA256 = "sha256";

  private static final int DIGEST_HEX_LENGTH = 64;

  /**
   * Validates the components.
   *
   * @throws IllegalArgumentException if the version is not {@code v1}, the algorithm not {@code
   *     sha256}, or the digest not 64 lowercase hex digits
   */
  public Fingerprint {
    if (!V1.equals(version)) {
      throw new IllegalArgumentException(
          "unsupported fingerprint version " + quote(version) + ", expected \"" + V1 + "\"");
    }
    if (!SHA256.equals(algorithm)) {
      throw new IllegalArgumentException(
          "unsupported fingerprint algorithm "
              + quote(algorithm)
              + " for version "
              + V1
              + ", expected \""
              + SHA256
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

  /**
   * Computes the {@code v1} fingerprint of a command.
   *
   * @param canonicalCommand the command as a value tree accepted by {@link CanonicalJson}
   * @return SHA-256 over the command's canonical JSON bytes
   * @throws IllegalArgumentException if the command has no canonical JSON form
   */
  public static Fingerprint of(Object canonicalCommand) {
    byte[] bytes = CanonicalJson.canonicalBytes(canonicalCommand);
    MessageDigest sha256;
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required on every Java platform", e);
    }
    return new Fingerprint(V1, SHA256, HexFormat.of().formatHex(sha256.digest(bytes)));
  }

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
    if (parts.length != 3) {
      throw new IllegalArgumentException(
          "fingerprint must have the form v1:sha256:<hex>, got " + quote(text));
    }
    return new Fingerprint(parts[0], parts[1], parts[2]);
  }

  /** Returns the text form {@code v1:sha256:<hex>}, which {@link #parse(String)} reads back. */
  @Override
  public String toString() {
    return version + ':' + algorithm + ':' + digest;
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
