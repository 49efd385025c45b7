package dev.idemkit.examples.payments.orders;

import dev.idemkit.examples.payments.orders.OrderRequests.CreateOrder;
import dev.idemkit.examples.payments.orders.OrderRequests.Item;
import dev.idemkit.examples.payments.orders.OrderRequests.OrderResponse;
import dev.idemkit.examples.payments.payments.Money;
import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Orders, in the caller's transaction. */
@Repository
public class OrderRepository {

  private final JdbcClient jdbc;

  public OrderRepository(JdbcClient jdbc) {
    this.jdbc = jdbc;
  }

  public OrderResponse create(String tenant, CreateOrder order) {
    UUID id = UUID.randomUUID();
    String total = order.total();
    jdbc.sql(
            "insert into shop_order (id, tenant_id, currency, total, status, created_at)"
                + " values (?, ?, ?, ?, 'PENDING_PAYMENT', ?)")
        .params(
            id, tenant, order.normalizedCurrency(), new BigDecimal(total), Timestamp.from(now()))
        .update();
    int line = 0;
    for (Item item : order.items()) {
      jdbc.sql(
              "insert into shop_order_item (order_id, tenant_id, line, sku, quantity, unit_price)"
                  + " values (?, ?, ?, ?, ?, ?)")
          .params(id, tenant, ++line, item.sku(), item.quantity(), new BigDecimal(item.unitPrice()))
          .update();
    }
    return new OrderResponse(
        id.toString(), "PENDING_PAYMENT", total, order.normalizedCurrency(), null);
  }

  /** Reads an order of the tenant; with {@code lock}, holds it for the rest of the transaction. */
  public Optional<OrderResponse> find(String tenant, UUID id, boolean lock) {
    return jdbc.sql(
            "select * from shop_order where id = ? and tenant_id = ?" + (lock ? " for update" : ""))
        .params(id, tenant)
        .query(
            (rs, row) -> {
              Timestamp paid = rs.getTimestamp("paid_at");
              String currency = rs.getString("currency");
              return new OrderResponse(
                  rs.getString("id"),
                  rs.getString("status"),
                  Money.normalize(rs.getBigDecimal("total"), currency),
                  currency,
                  paid == null ? null : paid.toInstant().toString());
            })
        .optional();
  }

  public Instant markPaid(UUID id) {
    Instant paidAt = now();
    jdbc.sql("update shop_order set status = 'PAID', paid_at = ? where id = ?")
        .params(Timestamp.from(paidAt), id)
        .update();
    return paidAt;
  }

  private static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MICROS);
  }
}
