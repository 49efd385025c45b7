package dev.idemkit.outbox;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * Event ids derived from what an event means, never random: a name-based UUID (version 5, SHA-1,
 * RFC 9562) of the tenant, a key naming the operation that caused the event, and the event type. A
 * retry, a takeover by another instance, or a recovery worker that writes "the same" event writes
 * the same id, so the outbox keeps one row and every consumer sees one message id.
 */
public final class EventIds {

  /** The namespace of Idemkit event ids (a fixed, random version-4 UUID). */
  public static final UUID NAMESPACE = UUID.fromString("6f1c2a9e-3b7d-4e55-9a8c-0d4b1e7f2c31");

  private EventIds() {}

  /**
   * The id of the event of type {@code eventType} that the operation named {@code key} causes for
   * {@code tenant}. Use a key that names the operation, not the request: the scoped idempotency key
   * (tenant, operation, client key), or a business id such as the payment's.
   */
  public static UUID derive(String tenant, String key, String eventType) {
    return nameBased(NAMESPACE, lengthPrefixed(tenant, key, eventType));
  }

  /** The id of an aggregate's {@code sequence}-th event. */
  public static UUID forAggregate(String aggregateType, String aggregateId, long sequence) {
    return nameBased(
        NAMESPACE, lengthPrefixed(aggregateType, aggregateId, Long.toString(sequence)));
  }

  /** Each part with its length in front, so no two lists of parts give the same name. */
  private static byte[] lengthPrefixed(String... parts) {
    StringBuilder sb = new StringBuilder();
    for (String p : parts) {
      if (p == null) {
        throw new NullPointerException("event id part");
      }
      sb.append(p.length()).append(':').append(p);
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * One SHA-1 digest per thread: {@link MessageDigest#getInstance} looks the algorithm up among the
   * security providers on every call, a cost on every append.
   */
  private static final ThreadLocal<MessageDigest> SHA1 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return MessageDigest.getInstance("SHA-1");
            } catch (NoSuchAlgorithmException e) {
              throw new IllegalStateException("SHA-1 is required of every JDK", e);
            }
          });

  static UUID nameBased(UUID namespace, byte[] name) {
    MessageDigest sha1 = SHA1.get();
    sha1.reset();
    ByteBuffer ns = ByteBuffer.allocate(16);
    ns.putLong(namespace.getMostSignificantBits()).putLong(namespace.getLeastSignificantBits());
    sha1.update(ns.array());
    byte[] h = sha1.digest(name);
    h[6] = (byte) ((h[6] & 0x0f) | 0x50); // version 5
    h[8] = (byte) ((h[8] & 0x3f) | 0x80); // IETF variant
    ByteBuffer b = ByteBuffer.wrap(h, 0, 16);
    return new UUID(b.getLong(), b.getLong());
  }
}
