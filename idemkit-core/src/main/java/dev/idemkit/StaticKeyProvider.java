package dev.idemkit;

import dev.idemkit.spi.KeyProvider;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Master keys from configuration (e.g. {@code idemkit.protection.encryption.master-keys.mk2=<base64
 * of 32 bytes>}), wrapping data keys with AES-256-GCM. To rotate: add the new key, make it current,
 * call {@link DataProtection#rewrapDataKeys(String)}, then remove the old key. Prefer a KMS in
 * production (implement {@link KeyProvider}): its master keys never enter the process.
 */
public final class StaticKeyProvider implements KeyProvider {

  private static final int IV_BYTES = 12;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Map<String, byte[]> keys;
  private final String current;

  private StaticKeyProvider(Map<String, byte[]> keys, String current) {
    Map<String, byte[]> copy = new LinkedHashMap<>();
    keys.forEach(
        (id, key) -> {
          if (key == null || key.length != 32) {
            throw new IllegalArgumentException("master key " + id + " must be 32 bytes (AES-256)");
          }
          copy.put(id, key.clone());
        });
    this.keys = Map.copyOf(copy);
    this.current = Objects.requireNonNull(current, "current");
    if (!this.keys.containsKey(current)) {
      throw new IllegalArgumentException("current master key " + current + " is not configured");
    }
  }

  /** Master keys by id, and the id of the one that wraps new data keys. */
  public static StaticKeyProvider of(Map<String, byte[]> keys, String current) {
    return new StaticKeyProvider(keys, current);
  }

  /** Master keys by id as base64 text (32 bytes each), as configuration holds them. */
  public static StaticKeyProvider ofBase64(Map<String, String> keys, String current) {
    Map<String, byte[]> decoded = new LinkedHashMap<>();
    keys.forEach((id, text) -> decoded.put(id, Base64.getDecoder().decode(text.trim())));
    return new StaticKeyProvider(decoded, current);
  }

  /** A new random 32-byte key as base64, for configuration. */
  public static String newKeyBase64() {
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    return Base64.getEncoder().encodeToString(key);
  }

  @Override
  public String currentKeyId() {
    return current;
  }

  @Override
  public byte[] wrap(String masterKeyId, byte[] dataKey, byte[] context) {
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key(masterKeyId), new GCMParameterSpec(128, iv));
      cipher.updateAAD(context);
      byte[] sealed = cipher.doFinal(dataKey);
      byte[] out = new byte[IV_BYTES + sealed.length];
      System.arraycopy(iv, 0, out, 0, IV_BYTES);
      System.arraycopy(sealed, 0, out, IV_BYTES, sealed.length);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Could not wrap a data key with " + masterKeyId, e);
    }
  }

  @Override
  public byte[] unwrap(String masterKeyId, byte[] wrapped, byte[] context) {
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(
          Cipher.DECRYPT_MODE, key(masterKeyId), new GCMParameterSpec(128, wrapped, 0, IV_BYTES));
      cipher.updateAAD(context);
      return cipher.doFinal(wrapped, IV_BYTES, wrapped.length - IV_BYTES);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(
          "A data key does not unwrap with master key " + masterKeyId, e);
    }
  }

  private SecretKeySpec key(String id) {
    byte[] key = keys.get(id);
    if (key == null) {
      throw new IllegalStateException(
          "Master key " + id + " is not configured; it wrapped data keys still in use");
    }
    return new SecretKeySpec(key, "AES");
  }
}
