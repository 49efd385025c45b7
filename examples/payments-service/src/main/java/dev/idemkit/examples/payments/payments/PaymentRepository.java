package dev.idemkit.examples.payments.payments;

import dev.idemkit.examples.payments.Events;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Payments and their events, written in the caller's transaction. */
@Repository
public class PaymentRepository {

  private final JdbcClient jdbc;
  private final Events events;

  public PaymentRepository(JdbcClient jdbc, Events events) {
    this.jdbc = jdbc;
    this.events = events;
  }

  /**
   * Inserts the payment ({@code status}) and its {@code PaymentCreated} event, unless the business
   * key {@code (tenant, account, merchant reference)} already has a payment.
   *
   * @return empty if the business key is taken (the existing payment's id is then {@link
   *     #findIdByBusinessKey})
   */
  public Optional<PaymentResponse> create(
      String tenant, CreatePaymentRequest request, String status) {
    UUID id = UUID.randomUUID();
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    int inserted =
        jdbc.sql(
                """
                insert into payment (id, tenant_id, account_id, amount, currency,
                    merchant_reference, channel, status, created_at)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?)
                on conflict (tenant_id, account_id, merchant_reference) do nothing
                """)
            .params(
                id,
                tenant,
                request.accountId(),
                new BigDecimal(request.normalizedAmount()),
                request.normalizedCurrency(),
                request.merchantReference(),
                request.normalizedChannel(),
                status,
                Timestamp.from(now))
            .update();
    if (inserted == 0) {
      return Optional.empty();
    }
    PaymentResponse payment =
        new PaymentResponse(
            id.toString(),
            status,
            request.accountId(),
            request.normalizedAmount(),
            request.normalizedCurrency(),
            request.merchantReference(),
            request.normalizedChannel(),
            null,
            now.toString());
    events.append(
        "PaymentCreated",
        tenant,
        "payment",
        id.toString(),
        "payment:" + id,
        Map.of(
            "paymentId", id.toString(),
            "accountId", payment.accountId(),
            "amount", payment.amount(),
            "currency", payment.currency()));
    return Optional.of(payment);
  }

  public Optional<String> findIdByBusinessKey(String tenant, String accountId, String reference) {
    return jdbc.sql(
            "select id from payment where tenant_id = ? and account_id = ? and merchant_reference = ?")
        .params(tenant, accountId, reference)
        .query(String.class)
        .optional();
  }

  /** A tenant sees only its own payments. */
  public Optional<PaymentResponse> find(String tenant, UUID id) {
    return jdbc.sql("select * from payment where id = ? and tenant_id = ?")
        .params(id, tenant)
        .query(PaymentRepository::map)
        .optional();
  }

  /** Any tenant's payment, for the phases that carry it on (they know its id). */
  public PaymentResponse get(UUID id) {
    return jdbc.sql("select * from payment where id = ?")
        .param(id)
        .query(PaymentRepository::map)
        .single();
  }

  /** Moves a payment along: {@code PROVIDER_REQUEST_SENT}, {@code COMPLETED}, .... */
  public void setStatus(UUID id, String status, String providerChargeId) {
    jdbc.sql(
            "update payment set status = ?, provider_charge_id = coalesce(?, provider_charge_id),"
                + " updated_at = now() where id = ?")
        .params(status, providerChargeId, id)
        .update();
  }

  private static PaymentResponse map(ResultSet rs, int row) throws SQLException {
    String currency = rs.getString("currency");
    return new PaymentResponse(
        rs.getString("id"),
        rs.getString("status"),
        rs.getString("account_id"),
        Money.normalize(rs.getBigDecimal("amount"), currency),
        currency,
        rs.getString("merchant_reference"),
        rs.getString("channel"),
        rs.getString("provider_charge_id"),
        rs.getTimestamp("created_at").toInstant().toString());
  }
}
