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
  private static final String PREFIX = "ik_";
  private static final int PAYLOAD_BYTES = 24;

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
    ByteBuffer payload = ByteBuffer.allocate(PAYLOAD_BYTES);
    payload.putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits());
    payload.putLong(expires.getEpochSecond());
    byte[] p = payload.array();
    String key = new String(spell(p, mac(tenant, operation, p)), StandardCharsets.US_ASCII);
    return new Issued(IdempotencyKey.of(key), Instant.ofEpochSecond(expires.getEpochSecond()));
  }

  /** Whether {@code operation} accepts only issued keys. */
  public boolean isStrict(String operation) {
    return strictOperations.contains(operation);
  }

  /** What a key is to this server: how {@link #check} classifies it. */
  public enum Check {
    /** Not in the issued-key form (no {@code ik_} prefix, in any case): an ordinary client key. */
    NOT_ISSUED_FORM,
    /** Issued by this server for this tenant and operation, exactly this text, still valid. */
    VALID,
    /**
     * Issued for this tenant and operation, exactly this text, but its validity has ended: only a
     * record already made with it may still answer.
     */
    EXPIRED,
    /**
     * Carries the issued-key prefix but does not verify exactly: another tenant's or operation's,
     * signed with another secret, tampered with, or another spelling of an issued key.
     */
    NOT_VERIFIED
  }

  /**
   * Whether {@code key} is in the issued-key form, so it must verify to be used at all. The prefix
   * is matched in any case: {@code IK_…} is another spelling of an issued key, not an ordinary
   * client key (which would let an upper-cased issued key pay a second time).
   */
  public static boolean hasIssuedForm(IdempotencyKey key) {
    return key.value().regionMatches(true, 0, PREFIX, 0, PREFIX.length());
  }

  /** True if the server issued {@code key} for this tenant and operation and it has not expired. */
  public boolean verify(IdempotencyKey key, String tenant, String operation) {
    return check(key, tenant, operation) == Check.VALID;
  }

  /**
   * Classifies {@code key}. An issued key verifies only as the exact text that was issued: the
   * decoded payload and MAC are encoded again and compared, in constant time, with the key. Base64
   * has other spellings of the same bytes (padding, the unused low bits of the last character), and
   * each spelling would otherwise be a separate key for the same issued key, so one key could pay
   * several times.
   */
  public Check check(IdempotencyKey key, String tenant, String operation) {
    String v = key.value();
    if (!hasIssuedForm(key)) {
      return Check.NOT_ISSUED_FORM;
    }
    int dot = v.indexOf('.');
    if (dot < 0) {
      return Check.NOT_VERIFIED;
    }
    byte[] payload;
    try {
      payload = B64D.decode(v.substring(PREFIX.length(), dot));
      B64D.decode(v.substring(dot + 1));
    } catch (IllegalArgumentException e) {
      return Check.NOT_VERIFIED;
    }
    if (payload.length != PAYLOAD_BYTES) {
      return Check.NOT_VERIFIED;
    }
    byte[] expected = spell(payload, mac(tenant, operation, payload));
    if (!MessageDigest.isEqual(expected, v.getBytes(StandardCharsets.US_ASCII))) {
      return Check.NOT_VERIFIED;
    }
    long expires = ByteBuffer.wrap(payload, 16, 8).getLong();
    return clock.instant().getEpochSecond() < expires ? Check.VALID : Check.EXPIRED;
  }

  /** The one text of an issued key. */
  private static byte[] spell(byte[] payload, byte[] mac) {
    return (PREFIX + B64.encodeToString(payload) + "." + B64.encodeToString(mac))
        .getBytes(StandardCharsets.US_ASCII);
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
