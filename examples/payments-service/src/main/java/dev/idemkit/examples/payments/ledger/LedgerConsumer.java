package dev.idemkit.examples.payments.ledger;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageFailedException;
import dev.idemkit.outbox.MessageHandler;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Books each completed payment twice, as double entry: a debit of the payer's account and a credit
 * of the tenant's merchant account, of the same amount. Runs in the inbox's transaction; each entry
 * is also unique per (entry type, source payment), so even a message arriving by another path (a
 * replay from another consumer name, an operator's re-queue) cannot book a payment twice.
 */
public final class LedgerConsumer implements MessageHandler {

  /** The consumer's name in the inbox. */
  public static final String NAME = "ledger";

  /** The account every tenant's payments are credited to. */
  public static String merchantAccount(String tenant) {
    return "merchant:" + tenant;
  }

  private static final TypeReference<Map<String, String>> PAYLOAD = new TypeReference<>() {};

  private final JsonMapper json;

  public LedgerConsumer(JsonMapper json) {
    this.json = json;
  }

  private static final String BOOK =
      """
      insert into ledger_entry (tenant_id, account_id, entry_type, direction, amount, currency,
                                source_payment_id, created_at)
      values (?, ?, ?, ?, ?, ?, ?, ?)
      on conflict (entry_type, source_payment_id) do nothing
      """;

  @Override
  public void apply(Connection transaction, EventEnvelope message) throws Exception {
    applyAll(transaction, List.of(message));
  }

  /**
   * Books a batch of messages with one JDBC batch (two rows per completed payment): one round trip
   * for the lot. A payload that cannot be read names its message ({@link MessageFailedException}),
   * so the inbox applies the rest without it.
   */
  @Override
  public void applyAll(Connection transaction, List<EventEnvelope> messages) throws Exception {
    Timestamp now = Timestamp.from(Instant.now());
    int rows = 0;
    try (PreparedStatement s = transaction.prepareStatement(BOOK)) {
      for (EventEnvelope message : messages) {
        if (!"PaymentCompleted".equals(message.type())) {
          continue;
        }
        UUID paymentId;
        BigDecimal amount;
        String currency;
        String account;
        try {
          Map<String, String> payment = json.readValue(message.payload(), PAYLOAD);
          paymentId = UUID.fromString(payment.get("paymentId"));
          amount = new BigDecimal(payment.get("amount"));
          currency = payment.get("currency");
          account = payment.get("accountId");
        } catch (RuntimeException e) {
          throw new MessageFailedException(message, e);
        }
        add(
            s,
            message.tenant(),
            account,
            "PAYMENT_DEBIT",
            "DEBIT",
            amount,
            currency,
            paymentId,
            now);
        add(
            s,
            message.tenant(),
            merchantAccount(message.tenant()),
            "PAYMENT_CREDIT",
            "CREDIT",
            amount,
            currency,
            paymentId,
            now);
        rows += 2;
      }
      if (rows > 0) {
        s.executeBatch();
      }
    }
  }

  private static void add(
      PreparedStatement s,
      String tenant,
      String account,
      String type,
      String direction,
      BigDecimal amount,
      String currency,
      UUID paymentId,
      Timestamp at)
      throws Exception {
    s.setString(1, tenant);
    s.setString(2, account);
    s.setString(3, type);
    s.setString(4, direction);
    s.setBigDecimal(5, amount);
    s.setString(6, currency);
    s.setObject(7, paymentId);
    s.setTimestamp(8, at);
    s.addBatch();
  }
}
