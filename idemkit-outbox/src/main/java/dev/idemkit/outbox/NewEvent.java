package dev.idemkit.outbox;

import java.util.UUID;

/**
 * An event to append: what happened, to which aggregate, and the key of the operation that caused
 * it, from which its id is {@link EventIds#derive derived}.
 *
 * <p>Checked when built, so that an event that could never be stored or sent is refused in the
 * writer's transaction instead of being parked by the relay later: every field is required ({@link
 * NullPointerException} naming it), no text may be blank or hold a NUL character, the aggregate
 * type must be usable in a broker's topic name (letters, digits, {@code .}, {@code _}, {@code -},
 * at most {@value #MAX_AGGREGATE_TYPE_LENGTH} characters; Kafka names each aggregate type's topic
 * with it) and the payload must be exactly one well-formed JSON value. Each refusal is an {@link
 * IllegalArgumentException} naming the field. The payload's size is checked by {@link
 * Outbox#append} against the outbox's limit.
 *
 * @param type what happened, e.g. {@code PaymentCompleted}
 * @param tenant whose event it is
 * @param aggregateType e.g. {@code payment}: letters, digits, {@code .}, {@code _}, {@code -}
 * @param aggregateId e.g. the payment's id
 * @param causeKey names the operation that caused it (the scoped idempotency key, or a business
 *     id): the same cause and type always give the same event id
 * @param payload one JSON value, usually an object
 */
public record NewEvent(
    String type,
    String tenant,
    String aggregateType,
    String aggregateId,
    String causeKey,
    String payload) {

  /** Longest aggregate type accepted: with a topic prefix it stays within Kafka's 249. */
  public static final int MAX_AGGREGATE_TYPE_LENGTH = 200;

  public NewEvent {
    requireText("type", type);
    requireText("tenant", tenant);
    requireText("aggregateType", aggregateType);
    requireText("aggregateId", aggregateId);
    requireText("causeKey", causeKey);
    requireText("payload", payload);
    requireTopicSafe(aggregateType);
    JsonSyntax.requireValue(payload, "payload");
  }

  private static void requireText(String field, String value) {
    if (value == null) {
      throw new NullPointerException(field + " must not be null");
    }
    if (value.isBlank()) {
      throw new IllegalArgumentException(field + " must not be blank");
    }
    if (value.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          field + " holds a NUL character (U+0000) at " + value.indexOf('\0') + ": not storable");
    }
  }

  /**
   * Letters, digits, '.', '_', '-' (the characters Kafka allows in a topic name), at most {@value
   * #MAX_AGGREGATE_TYPE_LENGTH}, and not {@code .} or {@code ..} alone.
   */
  private static void requireTopicSafe(String aggregateType) {
    if (aggregateType.length() > MAX_AGGREGATE_TYPE_LENGTH) {
      throw new IllegalArgumentException(
          "aggregateType is "
              + aggregateType.length()
              + " characters; at most "
              + MAX_AGGREGATE_TYPE_LENGTH
              + " are allowed");
    }
    for (int i = 0; i < aggregateType.length(); i++) {
      char c = aggregateType.charAt(i);
      boolean safe =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-';
      if (!safe) {
        throw new IllegalArgumentException(
            "aggregateType '"
                + aggregateType
                + "' has a character a topic name cannot carry at "
                + i
                + ": use letters, digits, '.', '_' and '-' only");
      }
    }
    if (aggregateType.equals(".") || aggregateType.equals("..")) {
      throw new IllegalArgumentException("aggregateType must not be '.' or '..'");
    }
  }

  /** The event's derived id. */
  public UUID eventId() {
    return EventIds.derive(tenant, causeKey, type);
  }
}
