package dev.idemkit.examples.payments.ledger;

import dev.idemkit.examples.payments.payments.Money;
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
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A payment's ledger entries, and an account's balance; a tenant sees its own only. */
@Tag(name = "ledger")
@RestController
public class LedgerController {

  private final JdbcClient jdbc;
  private final PaymentRepository payments;

  public LedgerController(JdbcClient jdbc, PaymentRepository payments) {
    this.jdbc = jdbc;
    this.payments = payments;
  }

  /** The entries booked for a payment: empty until the ledger consumed its PaymentCompleted. */
  @Operation(operationId = "listLedgerEntries", summary = "A payment's ledger entries")
  @GetMapping("/v1/payments/{paymentId}/ledger-entries")
  @ProblemAnswer(status = 404, errorCodes = "PAYMENT_NOT_FOUND")
  public LedgerEntries entries(Principal tenant, @PathVariable UUID paymentId) {
    payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
    List<LedgerEntry> entries =
        jdbc.sql(
                """
                select entry_type, direction, account_id, amount, currency, created_at
                  from ledger_entry
                 where source_payment_id = ? and tenant_id = ?
                 order by id
                """)
            .params(paymentId, tenant.getName())
            .query(
                (rs, n) -> {
                  String currency = rs.getString("currency");
                  return new LedgerEntry(
                      rs.getString("entry_type"),
                      rs.getString("direction"),
                      rs.getString("account_id"),
                      Money.normalize(rs.getBigDecimal("amount"), currency),
                      currency,
                      rs.getTimestamp("created_at").toInstant().toString());
                })
            .list();
    return new LedgerEntries(paymentId.toString(), entries);
  }

  /** Debits, credits and balance (credits − debits) of one account, per currency. */
  @Operation(
      operationId = "getAccountBalance",
      summary = "An account's debits, credits and balance")
  @GetMapping("/v1/accounts/{accountId}/balance")
  @ProblemAnswer(status = 404, errorCodes = "ACCOUNT_NOT_FOUND")
  public AccountBalance balance(Principal tenant, @PathVariable String accountId) {
    List<Balance> balances =
        jdbc.sql(
                """
                select currency,
                       coalesce(sum(amount) filter (where direction = 'DEBIT'), 0) as debits,
                       coalesce(sum(amount) filter (where direction = 'CREDIT'), 0) as credits
                  from ledger_entry
                 where tenant_id = ? and account_id = ?
                 group by currency
                 order by currency
                """)
            .params(tenant.getName(), accountId)
            .query(
                (rs, n) -> {
                  String currency = rs.getString("currency");
                  return new Balance(
                      currency,
                      Money.normalize(rs.getBigDecimal("debits"), currency),
                      Money.normalize(rs.getBigDecimal("credits"), currency),
                      Money.normalize(
                          rs.getBigDecimal("credits").subtract(rs.getBigDecimal("debits")),
                          currency));
                })
            .list();
    if (balances.isEmpty()) {
      throw Errors.notFound(
          "ACCOUNT_NOT_FOUND", "No ledger entries for account " + accountId + ".");
    }
    return new AccountBalance(accountId, balances);
  }

  /** A payment's ledger entries, in booking order. */
  @Schema(requiredProperties = {"paymentId", "entries"})
  public record LedgerEntries(
      @Schema(format = "uuid") String paymentId, List<LedgerEntry> entries) {}

  /** One booking. */
  @Schema(
      requiredProperties = {
        "entryType",
        "direction",
        "accountId",
        "amount",
        "currency",
        "createdAt"
      })
  public record LedgerEntry(
      @Schema(allowableValues = {"PAYMENT_DEBIT", "PAYMENT_CREDIT"}) String entryType,
      @Schema(allowableValues = {"DEBIT", "CREDIT"}) String direction,
      String accountId,
      String amount,
      String currency,
      @Schema(format = "date-time") String createdAt) {}

  /** An account's totals, one per currency. */
  @Schema(requiredProperties = {"accountId", "balances"})
  public record AccountBalance(String accountId, List<Balance> balances) {}

  /** One currency's debits, credits and balance (credits − debits). */
  @Schema(requiredProperties = {"currency", "debits", "credits", "balance"})
  public record Balance(String currency, String debits, String credits, String balance) {}
}
