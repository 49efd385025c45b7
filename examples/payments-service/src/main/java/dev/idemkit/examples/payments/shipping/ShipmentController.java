package dev.idemkit.examples.payments.shipping;

import dev.idemkit.examples.payments.orders.OrderRepository;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.examples.payments.web.ProblemAnswer;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.security.Principal;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * An order's shipment: 404 {@code SHIPMENT_NOT_FOUND} until the shipping consumer has requested it;
 * 404 {@code ORDER_NOT_FOUND} for an order that is not the tenant's.
 */
@Tag(name = "shipping")
@RestController
public class ShipmentController {

  private final JdbcClient jdbc;
  private final OrderRepository orders;

  public ShipmentController(JdbcClient jdbc, OrderRepository orders) {
    this.jdbc = jdbc;
    this.orders = orders;
  }

  @Operation(operationId = "getShipment", summary = "A paid order's shipment")
  @GetMapping("/v1/orders/{orderId}/shipment")
  @ProblemAnswer(
      status = 404,
      errorCodes = {"ORDER_NOT_FOUND", "SHIPMENT_NOT_FOUND"})
  public Shipment shipment(Principal tenant, @PathVariable UUID orderId) {
    orders
        .find(tenant.getName(), orderId, false)
        .orElseThrow(() -> Errors.notFound("ORDER_NOT_FOUND", "No order " + orderId + "."));
    return jdbc.sql(
            "select order_id, status, created_at from shipment where order_id = ? and tenant_id = ?")
        .params(orderId, tenant.getName())
        .query(
            (rs, n) ->
                new Shipment(
                    rs.getString("order_id"),
                    rs.getString("status"),
                    rs.getTimestamp("created_at").toInstant().toString()))
        .optional()
        .orElseThrow(
            () ->
                Errors.notFound(
                    "SHIPMENT_NOT_FOUND",
                    "No shipment for order "
                        + orderId
                        + " (yet): it is requested once the order is paid."));
  }

  /** A paid order's shipment. */
  @Schema(requiredProperties = {"orderId", "status", "requestedAt"})
  public record Shipment(
      @Schema(format = "uuid") String orderId,
      @Schema(allowableValues = {"REQUESTED"}) String status,
      @Schema(format = "date-time") String requestedAt) {}
}
