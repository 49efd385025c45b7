package dev.idemkit.examples.payments.web;

import dev.idemkit.examples.payments.events.Consumers;
import dev.idemkit.examples.payments.shards.OperatorShards;
import dev.idemkit.outbox.Deliveries;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only, see {@link ApiGateFilter}): the outbox backlog, parked
 * events, parked and held inbox messages and parked receipt mails, and re-queueing each once its
 * cause is fixed. Payloads are not shown: they may hold personal data.
 *
 * <p>Every endpoint here checks for an operator itself ({@link OperatorEndpoints}), whatever the
 * gate in front decided: a gap in the gate must not show or re-queue events of every tenant. On
 * shards each reads or re-queues on every shard ({@link OperatorShards}).
 */
@RestController
public class EventsAdminController extends OperatorEndpoints {

  private final Outbox outbox;
  private final Consumers consumers;
  private final Deliveries deliveries;
  private final OperatorShards shards;

  public EventsAdminController(
      Outbox outbox, Consumers consumers, Deliveries deliveries, OperatorShards shards) {
    this.outbox = outbox;
    this.consumers = consumers;
    this.deliveries = deliveries;
    this.shards = shards;
  }

  /** One shard's backlog, or every shard's added up. */
  private record Backlog(
      Outbox.Backlog events, long parkedMessages, long heldMessages, long parkedDeliveries) {

    Backlog plus(Backlog other) {
      return new Backlog(
          events.plus(other.events),
          parkedMessages + other.parkedMessages,
          heldMessages + other.heldMessages,
          parkedDeliveries + other.parkedDeliveries);
    }
  }

  @Operation(operationId = "getOutboxBacklog", summary = "The outbox's backlog")
  @GetMapping("/v1/admin/events/outbox")
  @ApiResponse(
      responseCode = "200",
      description = "The backlog, and what waits for an operator",
      content = @Content(schema = @Schema(implementation = EventsAdminAnswers.Backlog.class)))
  public Map<String, Object> backlog() throws SQLException {
    Backlog b = shards.onEach(this::shardBacklog).stream().reduce(Backlog::plus).orElseThrow();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("unsent", b.events().unsent());
    m.put("parkedEvents", b.events().parked());
    m.put("oldestUnsentAgeSeconds", b.events().oldestUnsentAge().toMillis() / 1000.0);
    m.put("parkedMessages", b.parkedMessages());
    m.put("heldMessages", b.heldMessages());
    m.put("parkedDeliveries", b.parkedDeliveries());
    return m;
  }

  private Backlog shardBacklog() throws SQLException {
    long parkedMessages = 0;
    long heldMessages = 0;
    for (InboxConsumer c : consumers.all()) {
      parkedMessages += c.parkedCount();
      if (c.inSequence()) {
        heldMessages += c.heldSummary().count();
      }
    }
    return new Backlog(outbox.backlog(), parkedMessages, heldMessages, deliveries.parkedCount());
  }

  @Operation(operationId = "listParkedEvents", summary = "Parked events")
  @GetMapping("/v1/admin/events/outbox/parked")
  @ApiResponse(
      responseCode = "200",
      description = "Parked events, oldest first",
      content = @Content(schema = @Schema(implementation = EventsAdminAnswers.ParkedEvents.class)))
  public Map<String, Object> parkedEvents(@RequestParam(defaultValue = "100") int limit)
      throws SQLException {
    List<Map<String, Object>> events = new ArrayList<>();
    for (Outbox.ParkedEvent p :
        shards.listOnEach(() -> outbox.parked(clamp(limit))).stream()
            .sorted(Comparator.comparing(Outbox.ParkedEvent::parkedAt))
            .limit(clamp(limit))
            .toList()) {
      Map<String, Object> m = describe(p.event());
      m.put("attempts", p.attempts());
      m.put("lastError", p.lastError());
      m.put("parkedAt", p.parkedAt().toString());
      events.add(m);
    }
    return counted("events", events);
  }

  @Operation(operationId = "requeueParkedEvent", summary = "Re-queue a parked event")
  @PostMapping("/v1/admin/events/outbox/parked/{eventId}/requeue")
  @ProblemAnswer(status = 404, errorCodes = "PARKED_EVENT_NOT_FOUND")
  @ApiResponse(
      responseCode = "200",
      description = "The event is back in the relay's queue",
      content = @Content(schema = @Schema(implementation = EventsAdminAnswers.EventRequeued.class)))
  public Map<String, Object> requeueEvent(@PathVariable UUID eventId) throws SQLException {
    if (!shards.onEach(() -> outbox.requeue(eventId)).contains(true)) {
      throw Errors.notFound("PARKED_EVENT_NOT_FOUND", "No parked event " + eventId + ".");
    }
    return Map.of("eventId", eventId.toString(), "status", "REQUEUED");
  }

  @Operation(operationId = "listParkedMessages", summary = "Parked messages, per consumer")
  @GetMapping("/v1/admin/events/inbox/parked")
  @ApiResponse(
      responseCode = "200",
      description = "Parked messages of every consumer",
      content =
          @Content(schema = @Schema(implementation = EventsAdminAnswers.ParkedMessages.class)))
  public Map<String, Object> parkedMessages(@RequestParam(defaultValue = "100") int limit)
      throws SQLException {
    List<Map<String, Object>> messages = new ArrayList<>();
    for (InboxConsumer c : consumers.all()) {
      // At most limit per consumer, as on one database, whatever the number of shards.
      for (InboxConsumer.ParkedMessage p :
          shards.listOnEach(() -> c.parked(clamp(limit))).stream().limit(clamp(limit)).toList()) {
        Map<String, Object> m = describe(p.message(), c);
        m.put("attempts", p.attempts());
        m.put("lastError", p.lastError());
        messages.add(m);
      }
    }
    return counted("messages", messages);
  }

  /**
   * Messages held behind a gap in their aggregate's sequence (consumers applying in sequence: on
   * Kafka, all of them), longest held first; each is applied once the message before it is (a
   * parked one: re-queue it).
   */
  @Operation(operationId = "listHeldMessages", summary = "Messages held behind a sequence gap")
  @GetMapping("/v1/admin/events/inbox/held")
  @ApiResponse(
      responseCode = "200",
      description = "Held messages, longest held first",
      content = @Content(schema = @Schema(implementation = EventsAdminAnswers.HeldMessages.class)))
  public Map<String, Object> heldMessages(@RequestParam(defaultValue = "100") int limit)
      throws SQLException {
    List<Map<String, Object>> messages = new ArrayList<>();
    for (InboxConsumer c : consumers.all()) {
      if (!c.inSequence()) {
        continue;
      }
      for (InboxConsumer.HeldMessage h :
          shards.listOnEach(() -> c.held(clamp(limit))).stream()
              .sorted(Comparator.comparing(InboxConsumer.HeldMessage::heldAt))
              .limit(clamp(limit))
              .toList()) {
        Map<String, Object> m = describe(h.message(), c);
        m.put("lastApplied", h.lastApplied());
        m.put("heldAt", h.heldAt().toString());
        messages.add(m);
      }
    }
    return counted("messages", messages);
  }

  @Operation(operationId = "requeueParkedMessage", summary = "Re-queue a parked message")
  @PostMapping("/v1/admin/events/inbox/{consumer}/parked/{messageId}/requeue")
  @ProblemAnswer(
      status = 404,
      errorCodes = {"CONSUMER_NOT_FOUND", "PARKED_MESSAGE_NOT_FOUND"})
  @ApiResponse(
      responseCode = "200",
      description = "The message applied again, and what came of it",
      content =
          @Content(schema = @Schema(implementation = EventsAdminAnswers.MessageRequeued.class)))
  public Map<String, Object> requeueMessage(
      @PathVariable String consumer, @PathVariable UUID messageId) throws SQLException {
    InboxConsumer c = consumers.byName().get(consumer);
    if (c == null) {
      throw Errors.notFound("CONSUMER_NOT_FOUND", "No consumer " + consumer + ".");
    }
    Received outcome =
        shards.onEach(() -> c.requeue(messageId)).stream()
            .filter(Objects::nonNull)
            .findFirst()
            .orElse(null);
    if (outcome == null) {
      throw Errors.notFound(
          "PARKED_MESSAGE_NOT_FOUND", "No parked message " + messageId + " at " + consumer + ".");
    }
    return Map.of("messageId", messageId.toString(), "consumer", consumer, "outcome", outcome);
  }

  @Operation(operationId = "listParkedDeliveries", summary = "Parked deliveries (mails)")
  @GetMapping("/v1/admin/events/deliveries/parked")
  @ApiResponse(
      responseCode = "200",
      description = "Parked deliveries",
      content =
          @Content(schema = @Schema(implementation = EventsAdminAnswers.ParkedDeliveries.class)))
  public Map<String, Object> parkedDeliveries(@RequestParam(defaultValue = "100") int limit)
      throws SQLException {
    List<Deliveries.Delivery> parked =
        shards.listOnEach(() -> deliveries.parked(clamp(limit))).stream()
            .limit(clamp(limit))
            .toList();
    return counted("deliveries", parked);
  }

  @Operation(operationId = "requeueParkedDelivery", summary = "Re-queue a parked delivery")
  @PostMapping("/v1/admin/events/deliveries/parked/{key}/requeue")
  @ProblemAnswer(status = 404, errorCodes = "PARKED_DELIVERY_NOT_FOUND")
  @ApiResponse(
      responseCode = "200",
      description = "The delivery is back in the sender's queue",
      content =
          @Content(schema = @Schema(implementation = EventsAdminAnswers.DeliveryRequeued.class)))
  public Map<String, Object> requeueDelivery(@PathVariable String key) throws SQLException {
    if (!shards.onEach(() -> deliveries.requeue(key)).contains(true)) {
      throw Errors.notFound("PARKED_DELIVERY_NOT_FOUND", "No parked delivery " + key + ".");
    }
    return Map.of("key", key, "status", "REQUEUED");
  }

  /** A list answer: the items under {@code name}, and how many there are. */
  private static Map<String, Object> counted(String name, List<?> items) {
    return Map.of(name, items, "count", items.size());
  }

  private static int clamp(int limit) {
    return Math.min(Math.max(limit, 1), 1000);
  }

  private static Map<String, Object> describe(EventEnvelope e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("eventId", e.eventId().toString());
    m.put("type", e.type());
    m.put("tenant", e.tenant());
    m.put("aggregateType", e.aggregateType());
    m.put("aggregateId", e.aggregateId());
    m.put("sequence", e.sequence());
    m.put("occurredAt", e.occurredAt().toString());
    return m;
  }

  /** A message {@code consumer} received, without its payload. */
  private static Map<String, Object> describe(EventEnvelope e, InboxConsumer consumer) {
    Map<String, Object> m = describe(e);
    m.put("consumer", consumer.consumerName());
    return m;
  }
}
