package dev.idemkit.examples.payments.shipping;

import dev.idemkit.examples.payments.web.Errors;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** An order's shipment: 404 until the shipping consumer has requested it. */
@RestController
public class ShipmentController {

  private final JdbcClient jdbc;

  public ShipmentController(JdbcClient jdbc) {
    this.jdbc = jdbc;
  }

  @GetMapping("/v1/orders/{orderId}/shipment")
  public Map<String, Object> shipment(Principal tenant, @PathVariable UUID orderId) {
    return jdbc.sql(
            "select order_id, status, created_at from shipment where order_id = ? and tenant_id = ?")
        .params(orderId, tenant.getName())
        .query(
            (rs, n) -> {
              Map<String, Object> s = new LinkedHashMap<>();
              s.put("orderId", rs.getString("order_id"));
              s.put("status", rs.getString("status"));
              s.put("requestedAt", rs.getTimestamp("created_at").toInstant().toString());
              return s;
            })
        .optional()
        .orElseThrow(
            () ->
                Errors.notFound(
                    "SHIPMENT_NOT_FOUND",
                    "No shipment for order "
                        + orderId
                        + " (yet): it is requested once the order is paid."));
  }
}
