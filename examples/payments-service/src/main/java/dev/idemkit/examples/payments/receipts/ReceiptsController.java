package dev.idemkit.examples.payments.receipts;

import dev.idemkit.examples.payments.payments.PaymentRepository;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.examples.payments.web.ProblemAnswer;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.security.Principal;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A tenant's receipts for a payment, with their mail's status: {@code PENDING} until sent (the
 * deliveries tried so far in {@code attempts}), then {@code SENT}; {@code PARKED} when the mail
 * failed as often as the sender tries ({@code payments.events.delivery-max-attempts}) and waits for
 * an operator to re-queue it ({@code POST /v1/admin/events/deliveries/parked/{key}/requeue}). A
 * sent mail's record is deleted after {@code payments.events.delivery-retention}: its receipt then
 * reads {@code SENT} with no {@code sentAt}. 404 {@code PAYMENT_NOT_FOUND} for a payment that is
 * not the tenant's, as for its ledger entries.
 */
@Tag(name = "receipts")
@RestController
public class ReceiptsController {

  private final JdbcClient jdbc;
  private final PaymentRepository payments;

  public ReceiptsController(JdbcClient jdbc, PaymentRepository payments) {
    this.jdbc = jdbc;
    this.payments = payments;
  }

  @Operation(operationId = "listReceipts", summary = "A payment's receipts and their mail's status")
  @GetMapping("/v1/receipts")
  @ProblemAnswer(status = 404, errorCodes = "PAYMENT_NOT_FOUND")
  public Receipts receipts(Principal tenant, @RequestParam UUID paymentId) {
    payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
    List<Receipt> receipts =
        jdbc.sql(
                """
                select r.payment_id, r.delivery_key, r.created_at, d.status, d.attempts, d.delivered_at
                  from receipt r
                  left join idemkit_delivery d on d.delivery_key = r.delivery_key
                 where r.payment_id = ? and r.tenant_id = ?
                """)
            .params(paymentId, tenant.getName())
            .query(
                (rs, n) -> {
                  var sent = rs.getTimestamp("delivered_at");
                  return new Receipt(
                      rs.getString("payment_id"),
                      rs.getString("delivery_key"),
                      receiptStatus(rs.getString("status")),
                      rs.getInt("attempts"),
                      rs.getTimestamp("created_at").toInstant().toString(),
                      sent == null ? null : sent.toInstant().toString());
                })
            .list();
    return new Receipts(receipts);
  }

  /** A payment's receipts. */
  @Schema(requiredProperties = "receipts")
  public record Receipts(List<Receipt> receipts) {}

  /**
   * One receipt and its mail: {@code sentAt} is null until the mail is sent, and again once the
   * mail's delivery record is deleted ({@code payments.events.delivery-retention} after sending;
   * {@code status} stays {@code SENT}, {@code attempts} reads 0).
   */
  @Schema(
      requiredProperties = {
        "paymentId",
        "deliveryKey",
        "status",
        "attempts",
        "createdAt",
        "sentAt"
      })
  public record Receipt(
      @Schema(format = "uuid") String paymentId,
      String deliveryKey,
      @Schema(allowableValues = {"PENDING", "SENT", "PARKED"}) String status,
      int attempts,
      @Schema(format = "date-time") String createdAt,
      @Schema(
              types = {"string", "null"},
              format = "date-time")
          String sentAt) {}

  /**
   * The receipt's status from its delivery's: the mail is sent, waiting to be, or parked. No
   * delivery row: the mail was sent, and its row deleted after {@code
   * payments.events.delivery-retention} (the receipt and its delivery are written in one
   * transaction, and only delivered rows are ever deleted).
   */
  private static String receiptStatus(String deliveryStatus) {
    if (deliveryStatus == null || "DELIVERED".equals(deliveryStatus)) {
      return "SENT";
    }
    return "PARKED".equals(deliveryStatus) ? "PARKED" : "PENDING";
  }
}
