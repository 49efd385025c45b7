package dev.idemkit.examples.payments.web;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;

/**
 * The shapes of the events operator endpoints' answers ({@link EventsAdminController}), for the
 * OpenAPI document only: the controller builds them as maps, and {@code DocumentedAnswersIT} checks
 * that the answers it gets fit these. Payloads are never shown: they may hold personal data.
 */
public final class EventsAdminAnswers {

  private EventsAdminAnswers() {}

  /** The outbox's backlog, and what waits for an operator. */
  @Schema(
      name = "OutboxBacklog",
      requiredProperties = {
        "unsent",
        "parkedEvents",
        "oldestUnsentAgeSeconds",
        "parkedMessages",
        "heldMessages",
        "parkedDeliveries"
      })
  public record Backlog(
      @Schema(description = "Events not sent yet, parked ones excluded") long unsent,
      @Schema(description = "Events the relay gave up on; re-queue them") long parkedEvents,
      @Schema(description = "Age of the oldest unsent event, 0 when none")
          double oldestUnsentAgeSeconds,
      @Schema(description = "Messages parked by the service's consumers") long parkedMessages,
      @Schema(description = "Messages held behind a gap in their aggregate's sequence")
          long heldMessages,
      @Schema(description = "Mails the sender gave up on; re-queue them") long parkedDeliveries) {}

  /**
   * What a view of an event or a message shows of it, never its payload: its fields stand inline in
   * each view ({@code @JsonUnwrapped}), as the controller writes them.
   */
  @Schema(
      name = "EventView",
      requiredProperties = {
        "eventId",
        "type",
        "tenant",
        "aggregateType",
        "aggregateId",
        "sequence",
        "occurredAt"
      })
  public record EventView(
      @Schema(format = "uuid") String eventId,
      String type,
      String tenant,
      String aggregateType,
      String aggregateId,
      long sequence,
      @Schema(format = "date-time") String occurredAt) {}

  /** A parked event, without its payload. */
  @Schema(
      name = "ParkedEvent",
      requiredProperties = {"attempts", "lastError", "parkedAt"})
  public record ParkedEvent(
      @JsonUnwrapped EventView event,
      int attempts,
      @Schema(types = {"string", "null"}) String lastError,
      @Schema(format = "date-time") String parkedAt) {}

  /** Parked events, oldest first. */
  @Schema(
      name = "ParkedEvents",
      requiredProperties = {"events", "count"})
  public record ParkedEvents(List<ParkedEvent> events, int count) {}

  /** A message a consumer parked, without its payload. */
  @Schema(
      name = "ParkedMessage",
      requiredProperties = {"consumer", "attempts", "lastError"})
  public record ParkedMessage(
      @JsonUnwrapped EventView event,
      String consumer,
      int attempts,
      @Schema(types = {"string", "null"}) String lastError) {}

  /** Parked messages of every consumer. */
  @Schema(
      name = "ParkedMessages",
      requiredProperties = {"messages", "count"})
  public record ParkedMessages(List<ParkedMessage> messages, int count) {}

  /** A message held behind a gap in its aggregate's sequence, without its payload. */
  @Schema(
      name = "HeldMessage",
      requiredProperties = {"consumer", "lastApplied", "heldAt"})
  public record HeldMessage(
      @JsonUnwrapped EventView event,
      String consumer,
      @Schema(description = "The last sequence of its aggregate this consumer applied")
          long lastApplied,
      @Schema(format = "date-time") String heldAt) {}

  /** Held messages of every consumer applying in sequence, longest held first. */
  @Schema(
      name = "HeldMessages",
      requiredProperties = {"messages", "count"})
  public record HeldMessages(List<HeldMessage> messages, int count) {}

  /** A parked mail (a delivery outside the database), by its key. */
  @Schema(
      name = "ParkedDelivery",
      requiredProperties = {"key", "channel", "status", "attempts", "lastError"})
  public record ParkedDelivery(
      @Schema(description = "Its idempotency key at the receiving system") String key,
      String channel,
      @Schema(allowableValues = {"PARKED"}) String status,
      int attempts,
      @Schema(types = {"string", "null"}) String lastError) {}

  /** Parked deliveries. */
  @Schema(
      name = "ParkedDeliveries",
      requiredProperties = {"deliveries", "count"})
  public record ParkedDeliveries(List<ParkedDelivery> deliveries, int count) {}

  /** A parked event put back in the relay's queue. */
  @Schema(
      name = "EventRequeued",
      requiredProperties = {"eventId", "status"})
  public record EventRequeued(
      @Schema(format = "uuid") String eventId,
      @Schema(allowableValues = {"REQUEUED"}) String status) {}

  /** A parked message applied again by its consumer, and what came of it. */
  @Schema(
      name = "MessageRequeued",
      requiredProperties = {"messageId", "consumer", "outcome"})
  public record MessageRequeued(
      @Schema(format = "uuid") String messageId,
      String consumer,
      @Schema(allowableValues = {"APPLIED", "DUPLICATE", "HELD", "FAILED", "PARKED"})
          String outcome) {}

  /** A parked delivery put back in the sender's queue. */
  @Schema(
      name = "DeliveryRequeued",
      requiredProperties = {"key", "status"})
  public record DeliveryRequeued(
      String key, @Schema(allowableValues = {"REQUEUED"}) String status) {}
}
