package dev.idemkit.examples.payments.ledger;

import dev.idemkit.examples.payments.payments.Money;
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
  public Map<String, Object> entries(Principal tenant, @PathVariable UUID paymentId) {
    payments
        .find(tenant.getName(), paymentId)
        .orElseThrow(() -> Errors.notFound("PAYMENT_NOT_FOUND", "No payment " + paymentId + "."));
    List<Map<String, Object>> entries =
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
                  Map<String, Object> e = new LinkedHashMap<>();
                  String currency = rs.getString("currency");
                  e.put("entryType", rs.getString("entry_type"));
                  e.put("direction", rs.getString("direction"));
                  e.put("accountId", rs.getString("account_id"));
                  e.put("amount", Money.normalize(rs.getBigDecimal("amount"), currency));
                  e.put("currency", currency);
                  e.put("createdAt", rs.getTimestamp("created_at").toInstant().toString());
                  return e;
                })
            .list();
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("paymentId", paymentId.toString());
    answer.put("entries", entries);
    return answer;
  }

  /** Debits, credits and balance (credits − debits) of one account, per currency. */
  @Operation(
      operationId = "getAccountBalance",
      summary = "An account's debits, credits and balance")
  @GetMapping("/v1/accounts/{accountId}/balance")
  @ProblemAnswer(status = 404, errorCodes = "ACCOUNT_NOT_FOUND")
  public Map<String, Object> balance(Principal tenant, @PathVariable String accountId) {
    List<Map<String, Object>> balances =
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
                  Map<String, Object> b = new LinkedHashMap<>();
                  b.put("currency", currency);
                  b.put("debits", Money.normalize(rs.getBigDecimal("debits"), currency));
                  b.put("credits", Money.normalize(rs.getBigDecimal("credits"), currency));
                  b.put(
                      "balance",
                      Money.normalize(
                          rs.getBigDecimal("credits").subtract(rs.getBigDecimal("debits")),
                          currency));
                  return b;
                })
            .list();
    if (balances.isEmpty()) {
      throw Errors.notFound(
          "ACCOUNT_NOT_FOUND", "No ledger entries for account " + accountId + ".");
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("accountId", accountId);
    answer.put("balances", balances);
    return answer;
  }
}
