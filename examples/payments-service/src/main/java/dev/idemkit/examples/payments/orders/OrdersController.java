package dev.idemkit.examples.payments.orders;

import dev.idemkit.examples.payments.Events;
import dev.idemkit.examples.payments.orders.OrderRequests.ConfirmPayment;
import dev.idemkit.examples.payments.orders.OrderRequests.CreateOrder;
import dev.idemkit.examples.payments.orders.OrderRequests.OrderResponse;
import dev.idemkit.examples.payments.orders.OrderRequests.PaidResponse;
import dev.idemkit.examples.payments.payments.Money;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.spring.boot.Idempotent;
import jakarta.validation.Valid;
import java.net.URI;
import java.security.Principal;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The mini shop of the seed: orders, and confirming their payment exactly once. */
@RestController
public class OrdersController {

  private final OrderRepository orders;
  private final Events events;

  public OrdersController(OrderRepository orders, Events events) {
    this.orders = orders;
    this.events = events;
  }

  @PostMapping(path = "/v1/orders", consumes = "application/json")
  @Idempotent(operation = "create_order", required = false)
  public ResponseEntity<OrderResponse> create(
      Principal tenant, @Valid @RequestBody CreateOrder request) {
    OrderResponse order = orders.create(tenant.getName(), request);
    return ResponseEntity.created(URI.create("/v1/orders/" + order.orderId())).body(order);
  }

  @GetMapping("/v1/orders/{orderId}")
  public OrderResponse get(Principal tenant, @PathVariable UUID orderId) {
    return orders.find(tenant.getName(), orderId, false).orElseThrow(() -> orderNotFound(orderId));
  }

  /**
   * Confirms the payment of an order. Idempotent per key; and an order already paid answers with
   * its payment under any key, so a client that lost its key still cannot pay twice.
   */
  @PostMapping(path = "/v1/orders/{orderId}/confirm-payment", consumes = "application/json")
  @Idempotent(operation = "confirm_payment", ttl = "PT24H")
  public ResponseEntity<PaidResponse> confirmPayment(
      Principal tenant, @PathVariable UUID orderId, @Valid @RequestBody ConfirmPayment request) {
    OrderResponse order =
        orders.find(tenant.getName(), orderId, true).orElseThrow(() -> orderNotFound(orderId));
    if ("PAID".equals(order.status())) {
      return ResponseEntity.ok(new PaidResponse(order.orderId(), "PAID", order.paidAt()));
    }
    String currency = request.currency().toUpperCase(Locale.ROOT);
    if (!currency.equals(order.currency())
        || !Money.normalize(request.amount(), currency).equals(order.total())) {
      throw Errors.unprocessable(
          "AMOUNT_MISMATCH",
          "Amount does not match the order",
          "Order "
              + orderId
              + " totals "
              + order.total()
              + " "
              + order.currency()
              + "; confirm exactly that amount.");
    }
    String paidAt = orders.markPaid(orderId).toString();
    // In confirm-payment's transaction: the order is paid if and only if OrderPaid is appended.
    events.append(
        "OrderPaid",
        tenant.getName(),
        "order",
        order.orderId(),
        "order:" + order.orderId(),
        Map.of(
            "orderId", order.orderId(),
            "total", order.total(),
            "currency", order.currency(),
            "paidAt", paidAt));
    return ResponseEntity.ok(new PaidResponse(order.orderId(), "PAID", paidAt));
  }

  private static RuntimeException orderNotFound(UUID orderId) {
    return Errors.notFound("ORDER_NOT_FOUND", "No order " + orderId + ".");
  }
}
