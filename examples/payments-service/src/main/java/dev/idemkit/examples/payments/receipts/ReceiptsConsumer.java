package dev.idemkit.examples.payments.receipts;

import dev.idemkit.outbox.Deliveries;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * One receipt per completed payment. An e-mail is not transactional, so this consumer does not send
 * it: in the inbox's transaction it writes the receipt row and records the mail as a delivery under
 * the key {@code receipt_payment_<paymentId>}; the {@link MailClient}'s sender delivers it later,
 * passing that key to the mail service as its idempotency key. The mail is recorded only with a new
 * receipt: the receipt row, kept for good, is what stops a payment applied again from mailing
 * again, however late (the mail's record is deleted after {@code
 * payments.events.delivery-retention}, its inbox row after the inbox retention).
 */
public final class ReceiptsConsumer implements MessageHandler {

  /** The consumer's name in the inbox. */
  public static final String NAME = "receipts";

  /** The delivery channel of receipt mails. */
  public static final String CHANNEL = "mail";

  private static final String INSERT =
      """
      insert into receipt (payment_id, tenant_id, account_id, delivery_key, created_at)
      values (?, ?, ?, ?, ?)
      on conflict (payment_id) do nothing
      """;

  private static final TypeReference<Map<String, String>> PAYLOAD = new TypeReference<>() {};

  private final Deliveries deliveries;
  private final JsonMapper json;

  public ReceiptsConsumer(Deliveries deliveries, JsonMapper json) {
    this.deliveries = deliveries;
    this.json = json;
  }

  /** The receipt mail's key, also its idempotency key at the mail service. */
  public static String deliveryKey(String paymentId) {
    return "receipt_payment_" + paymentId;
  }

  @Override
  public void apply(Connection transaction, EventEnvelope message) throws Exception {
    if (!"PaymentCompleted".equals(message.type())) {
      return;
    }
    Map<String, String> payment = json.readValue(message.payload(), PAYLOAD);
    String paymentId = payment.get("paymentId");
    String key = deliveryKey(paymentId);
    try (PreparedStatement s = transaction.prepareStatement(INSERT)) {
      s.setObject(1, UUID.fromString(paymentId));
      s.setString(2, message.tenant());
      s.setString(3, payment.get("accountId"));
      s.setString(4, key);
      s.setTimestamp(5, Timestamp.from(Instant.now()));
      if (s.executeUpdate() == 0) {
        // The receipt exists, so its mail was recorded with it (one transaction): this payment is
        // applied again (its inbox row forgotten). The receipt, kept for good, answers it: no
        // second mail, even after the mail's own record is deleted (delivery retention).
        return;
      }
    }
    deliveries.record(
        transaction,
        key,
        CHANNEL,
        json.writeValueAsString(
            new TreeMap<>(
                Map.of(
                    "to", payment.get("accountId"),
                    "subject", "Your payment " + paymentId,
                    "text",
                        "We received "
                            + payment.get("amount")
                            + " "
                            + payment.get("currency")
                            + "."))));
  }
}
