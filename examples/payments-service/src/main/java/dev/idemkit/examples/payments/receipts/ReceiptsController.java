package dev.idemkit.examples.payments.receipts;

import dev.idemkit.examples.payments.payments.PaymentRepository;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.examples.payments.web.ProblemAnswer;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A tenant's receipts for a payment, with their mail's status: {@code PENDING} until sent (the
 * deliveries tried so far in {@code attempts}), then {@code SENT}; {@code PARKED} when the mail
 * failed as often as the sender tries ({@code payments.events.delivery-max-attempts}) and waits for
 * an operator to re-queue it ({@code POST /v1/admin/events/deliveries/parked/{key}/requeue}). 404
 * {@code PAYMENT_NOT_FOUND} for a payment that is not the tenant's, as for its ledger entries.
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
  public Map<String, Object> receipts(Principal tenant, @RequestParam UUID paymentId) {
    payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
    List<Map<String, Object>> receipts =
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
                  Map<String, Object> r = new LinkedHashMap<>();
                  r.put("paymentId", rs.getString("payment_id"));
                  r.put("deliveryKey", rs.getString("delivery_key"));
                  r.put("status", receiptStatus(rs.getString("status")));
                  r.put("attempts", rs.getInt("attempts"));
                  r.put("createdAt", rs.getTimestamp("created_at").toInstant().toString());
                  var sent = rs.getTimestamp("delivered_at");
                  r.put("sentAt", sent == null ? null : sent.toInstant().toString());
                  return r;
                })
            .list();
    return Map.of("receipts", receipts);
  }

  /** The receipt's status from its delivery's: the mail is sent, waiting to be, or parked. */
  private static String receiptStatus(String deliveryStatus) {
    if ("DELIVERED".equals(deliveryStatus)) {
      return "SENT";
    }
    return "PARKED".equals(deliveryStatus) ? "PARKED" : "PENDING";
  }
}
