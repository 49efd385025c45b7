package dev.idemkit.examples.payments.payments;

import dev.idemkit.examples.payments.events.Events;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
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

  /** A payment not yet answered by the provider, and the key of the request that created it. */
  public record Unfinished(UUID id, String tenant, String idempotencyKey) {}

  /** {@link #create(String, String, CreatePaymentRequest, String)} with no idempotency key. */
  public Optional<PaymentResponse> create(
      String tenant, CreatePaymentRequest request, String status) {
    return create(tenant, null, request, status);
  }

  /**
   * Inserts the payment ({@code status}) and its {@code PaymentCreated} event, unless the business
   * key {@code (tenant, account, merchant reference)} already has a payment that is not {@code
   * FAILED}.
   *
   * @param idempotencyKey the key of the request that creates it (its scope is the tenant's {@code
   *     create_payment}), or {@code null}
   * @return empty if the business key is taken (the existing payment's id is then {@link
   *     #findIdByBusinessKey})
   */
  public Optional<PaymentResponse> create(
      String tenant, String idempotencyKey, CreatePaymentRequest request, String status) {
    UUID id = UUID.randomUUID();
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    int inserted =
        jdbc.sql(
                """
                insert into payment (id, tenant_id, account_id, amount, currency,
                    merchant_reference, channel, status, created_at, updated_at, idem_key)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                on conflict (tenant_id, account_id, merchant_reference)
                    where status not in ('FAILED', 'DECLINED') do nothing
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
                Timestamp.from(now),
                Timestamp.from(now),
                idempotencyKey)
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
            """
            select id from payment
            where tenant_id = ? and account_id = ? and merchant_reference = ?
              and status not in ('FAILED', 'DECLINED')
            """)
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

  /**
   * A tenant's payments with one merchant reference, oldest first: at most one per account that is
   * not {@code FAILED} (the business key), and any failed attempts before it.
   *
   * @param accountId only this account's, or {@code null} for every account
   */
  public List<PaymentResponse> findByReference(
      String tenant, String merchantReference, String accountId) {
    return jdbc.sql(
            """
            select * from payment
            where tenant_id = ? and merchant_reference = ?
              and (cast(? as text) is null or account_id = ?)
            order by created_at, id
            """)
        .params(tenant, merchantReference, accountId, accountId)
        .query(PaymentRepository::map)
        .list();
  }

  /** Any tenant's payment, for the phases that carry it on (they know its id). */
  public PaymentResponse get(UUID id) {
    return jdbc.sql("select * from payment where id = ?")
        .param(id)
        .query(PaymentRepository::map)
        .single();
  }

  /**
   * Records the provider's answer: the payment {@code COMPLETED} (or {@code DECLINED}) with the
   * charge id, and its {@code PaymentCompleted} (or {@code PaymentDeclined}) event, in the caller's
   * transaction. The event's id derives from the payment's, so recording the same answer again
   * writes the same event, not a second one.
   */
  public PaymentResponse recordOutcome(String tenant, UUID id, boolean declined, String chargeId) {
    PaymentResponse payment = moveTo(id, declined ? "DECLINED" : "COMPLETED", chargeId);
    events.append(
        declined ? "PaymentDeclined" : "PaymentCompleted",
        tenant,
        "payment",
        payment.paymentId(),
        "payment:" + payment.paymentId(),
        Map.of(
            "paymentId", payment.paymentId(),
            "accountId", payment.accountId(),
            "amount", payment.amount(),
            "currency", payment.currency()));
    return payment;
  }

  /** Moves a payment to {@code status} (with the provider's charge id, if any); returns it. */
  public PaymentResponse moveTo(UUID id, String status, String providerChargeId) {
    return jdbc.sql(
            """
            update payment set status = ?, provider_charge_id = coalesce(?, provider_charge_id),
                               updated_at = now()
            where id = ?
            returning *
            """)
        .params(status, providerChargeId, id)
        .query(PaymentRepository::map)
        .single();
  }

  /**
   * Payments still waiting for the provider's answer whose last change is {@code grace} old or
   * older, oldest first, with the key of the request that created them (payments from before keys
   * were kept are left out: nothing can tell whether a request still owns them).
   *
   * @param asOf the time to judge by; {@code null}: the database's
   */
  public List<Unfinished> unfinishedBefore(Instant asOf, Duration grace, int limit) {
    return jdbc.sql(
            """
            select id, tenant_id, idem_key from payment
            where status in ('LOCAL_PAYMENT_CREATED', 'PROVIDER_REQUEST_SENT')
              and idem_key is not null
              and coalesce(updated_at, created_at)
                  <= coalesce(cast(? as timestamptz), now()) - ? * interval '1 millisecond'
            order by created_at
            limit ?
            """)
        .params(asOf == null ? null : Timestamp.from(asOf), grace.toMillis(), limit)
        .query(
            (rs, row) ->
                new Unfinished(
                    rs.getObject("id", UUID.class),
                    rs.getString("tenant_id"),
                    rs.getString("idem_key")))
        .list();
  }

  /**
   * Closes a payment the provider never charged: {@code FAILED}, which frees its merchant
   * reference. Applied only while the payment still waits for the provider.
   *
   * @return whether it was closed
   */
  public boolean closeUncharged(UUID id) {
    return jdbc.sql(
                """
                update payment set status = 'FAILED', updated_at = now()
                where id = ? and status in ('LOCAL_PAYMENT_CREATED', 'PROVIDER_REQUEST_SENT')
                """)
            .param(id)
            .update()
        == 1;
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
