package dev.idemkit.spring.boot;

import dev.idemkit.IdempotencyKey;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Set;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Server-issued keys: an opaque key bound to a tenant, an operation and an expiry, signed with
 * HMAC-SHA256 so the server can check it without storing it. Format: {@code ik_} + base64url of
 * (random id, expiry) + {@code .} + base64url of the truncated MAC over tenant, operation and that
 * payload. The tenant and operation are not in the key, so it reveals nothing.
 */
public final class IssuedKeys {

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  private final byte[] secret;
  private final Duration validity;
  private final Set<String> strictOperations;
  private final Clock clock;

  public IssuedKeys(byte[] secret, Duration validity, Set<String> strictOperations, Clock clock) {
    if (secret.length < 16) {
      throw new IllegalArgumentException("The issued-key secret must be at least 16 bytes");
    }
    this.secret = secret.clone();
    this.validity = validity;
    this.strictOperations = Set.copyOf(strictOperations);
    this.clock = clock;
  }

  /** A random 32-byte secret, for a single instance that does not configure one. */
  public static byte[] randomSecret() {
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    return b;
  }

  /** An issued key and when it stops being accepted. */
  public record Issued(IdempotencyKey key, Instant expiresAt) {}

  public Issued issue(String tenant, String operation) {
    Instant expires = clock.instant().plus(validity);
    UUID id = UUID.randomUUID();
    ByteBuffer payload = ByteBuffer.allocate(24);
    payload.putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits());
    payload.putLong(expires.getEpochSecond());
    byte[] p = payload.array();
    String key =
        "ik_" + B64.encodeToString(p) + "." + B64.encodeToString(mac(tenant, operation, p));
    return new Issued(IdempotencyKey.of(key), Instant.ofEpochSecond(expires.getEpochSecond()));
  }

  /** Whether {@code operation} accepts only issued keys. */
  public boolean isStrict(String operation) {
    return strictOperations.contains(operation);
  }

  /** True if the server issued {@code key} for this tenant and operation and it has not expired. */
  public boolean verify(IdempotencyKey key, String tenant, String operation) {
    String v = key.value();
    int dot = v.indexOf('.');
    if (!v.startsWith("ik_") || dot < 0) {
      return false;
    }
    try {
      byte[] payload = B64D.decode(v.substring(3, dot));
      byte[] mac = B64D.decode(v.substring(dot + 1));
      if (payload.length != 24 || !MessageDigest.isEqual(mac, mac(tenant, operation, payload))) {
        return false;
      }
      long expires = ByteBuffer.wrap(payload, 16, 8).getLong();
      return clock.instant().getEpochSecond() < expires;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private byte[] mac(String tenant, String operation, byte[] payload) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      mac.update(
          ("idemkit-key\0" + tenant + "\0" + operation + "\0").getBytes(StandardCharsets.UTF_8));
      byte[] full = mac.doFinal(payload);
      byte[] truncated = new byte[20];
      System.arraycopy(full, 0, truncated, 0, truncated.length);
      return truncated;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}
