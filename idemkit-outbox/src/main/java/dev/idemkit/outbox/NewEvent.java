package dev.idemkit.outbox;

import java.util.Objects;
import java.util.UUID;

/**
 * An event to append: what happened, to which aggregate, and the key of the operation that caused
 * it, from which its id is {@link EventIds#derive derived}.
 *
 * @param type what happened, e.g. {@code PaymentCompleted}
 * @param tenant whose event it is
 * @param aggregateType e.g. {@code payment}
 * @param aggregateId e.g. the payment's id
 * @param causeKey names the operation that caused it (the scoped idempotency key, or a business
 *     id): the same cause and type always give the same event id
 * @param payload a JSON document
 */
public record NewEvent(
    String type,
    String tenant,
    String aggregateType,
    String aggregateId,
    String causeKey,
    String payload) {

  public NewEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(aggregateType, "aggregateType");
    Objects.requireNonNull(aggregateId, "aggregateId");
    Objects.requireNonNull(causeKey, "causeKey");
    Objects.requireNonNull(payload, "payload");
  }

  /** The event's derived id. */
  public UUID eventId() {
    return EventIds.derive(tenant, causeKey, type);
  }
}
