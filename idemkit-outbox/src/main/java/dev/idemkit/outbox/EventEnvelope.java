package dev.idemkit.outbox;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One event as it travels: from the outbox row, through a transport, into a consumer's inbox.
 *
 * <p>The {@link #eventId() event id} is derived from what the event means (see {@link EventIds}),
 * so the same logical event keeps its id whichever retry, takeover or relay writes or sends it;
 * consumers deduplicate on it. The {@link #sequence() sequence} numbers an aggregate's events from
 * 1 in the order their transactions committed.
 *
 * @param eventId the derived id; the message id at every consumer
 * @param type what happened, e.g. {@code PaymentCompleted}
 * @param tenant whose event it is
 * @param aggregateType the kind of thing it happened to, e.g. {@code payment}
 * @param aggregateId which one; the partition key, so one aggregate's events stay in order
 * @param sequence the aggregate's event number, from 1, gap-free, in commit order
 * @param occurredAt when the appending transaction wrote it
 * @param payload the event's body, a JSON document
 */
public record EventEnvelope(
    UUID eventId,
    String type,
    String tenant,
    String aggregateType,
    String aggregateId,
    long sequence,
    Instant occurredAt,
    String payload) {

  /** Header carrying {@link #eventId()} when a transport sends the payload as the message body. */
  public static final String HEADER_EVENT_ID = "idemkit-event-id";

  /** Header carrying {@link #type()}. */
  public static final String HEADER_TYPE = "idemkit-event-type";

  /** Header carrying {@link #tenant()}. */
  public static final String HEADER_TENANT = "idemkit-tenant";

  /** Header carrying {@link #aggregateType()}. */
  public static final String HEADER_AGGREGATE_TYPE = "idemkit-aggregate-type";

  /** Header carrying {@link #aggregateId()} (also the partition key). */
  public static final String HEADER_AGGREGATE_ID = "idemkit-aggregate-id";

  /** Header carrying {@link #sequence()} in decimal. */
  public static final String HEADER_SEQUENCE = "idemkit-sequence";

  /** Header carrying {@link #occurredAt()} in ISO-8601. */
  public static final String HEADER_OCCURRED_AT = "idemkit-occurred-at";

  public EventEnvelope {
    Objects.requireNonNull(eventId, "eventId");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(aggregateType, "aggregateType");
    Objects.requireNonNull(aggregateId, "aggregateId");
    Objects.requireNonNull(occurredAt, "occurredAt");
    Objects.requireNonNull(payload, "payload");
    if (sequence < 1) {
      throw new IllegalArgumentException("sequence starts at 1, was " + sequence);
    }
  }

  /**
   * The key a partitioned transport (Kafka) must route this event by: the aggregate's id, so that
   * one aggregate's events land in one partition and keep their order.
   */
  public String partitionKey() {
    return aggregateId;
  }

  /**
   * Everything but the payload, as string headers (names {@code HEADER_*}), for transports that
   * carry the payload as the message body and metadata beside it.
   */
  public Map<String, String> headers() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(HEADER_EVENT_ID, eventId.toString());
    h.put(HEADER_TYPE, type);
    h.put(HEADER_TENANT, tenant);
    h.put(HEADER_AGGREGATE_TYPE, aggregateType);
    h.put(HEADER_AGGREGATE_ID, aggregateId);
    h.put(HEADER_SEQUENCE, Long.toString(sequence));
    h.put(HEADER_OCCURRED_AT, occurredAt.toString());
    return h;
  }

  /**
   * The envelope back from {@link #headers()} and the payload.
   *
   * @throws IllegalArgumentException if a header is missing or malformed (the message was not
   *     written by an Idemkit relay)
   */
  public static EventEnvelope fromHeaders(Map<String, String> headers, String payload) {
    try {
      return new EventEnvelope(
          UUID.fromString(required(headers, HEADER_EVENT_ID)),
          required(headers, HEADER_TYPE),
          required(headers, HEADER_TENANT),
          required(headers, HEADER_AGGREGATE_TYPE),
          required(headers, HEADER_AGGREGATE_ID),
          Long.parseLong(required(headers, HEADER_SEQUENCE)),
          Instant.parse(required(headers, HEADER_OCCURRED_AT)),
          payload);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Not an Idemkit event: " + e.getMessage(), e);
    }
  }

  private static String required(Map<String, String> headers, String name) {
    String v = headers.get(name);
    if (v == null) {
      throw new IllegalArgumentException("header " + name + " is missing");
    }
    return v;
  }
}
