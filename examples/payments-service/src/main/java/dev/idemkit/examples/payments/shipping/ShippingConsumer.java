package dev.idemkit.examples.payments.shipping;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** One shipment request per paid order, unique per order, in the inbox's transaction. */
public final class ShippingConsumer implements MessageHandler {

  /** The consumer's name in the inbox. */
  public static final String NAME = "shipping";

  private static final TypeReference<Map<String, String>> PAYLOAD = new TypeReference<>() {};

  private final JsonMapper json;

  public ShippingConsumer(JsonMapper json) {
    this.json = json;
  }

  private static final String REQUEST =
      """
      insert into shipment (order_id, tenant_id, status, created_at)
      values (?, ?, 'REQUESTED', ?)
      on conflict (order_id) do nothing
      """;

  @Override
  public void apply(Connection transaction, EventEnvelope message) throws Exception {
    if (!"OrderPaid".equals(message.type())) {
      return;
    }
    String orderId = json.readValue(message.payload(), PAYLOAD).get("orderId");
    try (PreparedStatement s = transaction.prepareStatement(REQUEST)) {
      s.setObject(1, UUID.fromString(orderId));
      s.setString(2, message.tenant());
      s.setTimestamp(3, Timestamp.from(Instant.now()));
      s.executeUpdate();
    }
  }
}
