package dev.idemkit.examples.payments.orders;

import dev.idemkit.examples.payments.events.Events;
import dev.idemkit.examples.payments.orders.OrderRequests.ConfirmPayment;
import dev.idemkit.examples.payments.orders.OrderRequests.CreateOrder;
import dev.idemkit.examples.payments.orders.OrderRequests.OrderResponse;
import dev.idemkit.examples.payments.orders.OrderRequests.PaidResponse;
import dev.idemkit.examples.payments.payments.Money;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.examples.payments.web.ProblemAnswer;
import dev.idemkit.spring.boot.Idempotent;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
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
@Tag(name = "orders")
public class OrdersController {

  private final OrderRepository orders;
  private final Events events;

  public OrdersController(OrderRepository orders, Events events) {
    this.orders = orders;
    this.events = events;
  }

  /**
   * Creates an order. The Idempotency-Key is required (400 IDEMPOTENCY_KEY_MISSING without it): an
   * order has no natural business key, so without one a double submit would make two orders.
   */
  @PostMapping(path = "/v1/orders", consumes = "application/json")
  @Idempotent(operation = "create_order")
  @Operation(operationId = "createOrder", summary = "Create an order awaiting payment")
  @ApiResponse(responseCode = "201", description = "The order, awaiting payment")
  public ResponseEntity<OrderResponse> create(
      Principal tenant, @Valid @RequestBody CreateOrder request) {
    OrderResponse order = orders.create(tenant.getName(), request);
    return ResponseEntity.created(URI.create("/v1/orders/" + order.orderId())).body(order);
  }

  @GetMapping("/v1/orders/{orderId}")
  @Operation(operationId = "getOrder", summary = "An order of yours")
  @ProblemAnswer(status = 404, errorCodes = "ORDER_NOT_FOUND")
  public OrderResponse get(Principal tenant, @PathVariable UUID orderId) {
    return orders.find(tenant.getName(), orderId, false).orElseThrow(() -> orderNotFound(orderId));
  }

  /**
   * Confirms the payment of an order. Idempotent per key; and an order already paid answers with
   * its payment under any key, so a client that lost its key still cannot pay twice. The amount and
   * currency are checked first: a confirmation of another amount is refused (422 {@code
   * AMOUNT_MISMATCH}) whatever the order's state.
   */
  @PostMapping(path = "/v1/orders/{orderId}/confirm-payment", consumes = "application/json")
  @Idempotent(operation = "confirm_payment", ttl = "PT24H")
  @Operation(operationId = "confirmOrderPayment", summary = "Pay an order, once")
  @ApiResponse(responseCode = "200", description = "The order, paid")
  @ProblemAnswer(status = 404, errorCodes = "ORDER_NOT_FOUND")
  @ProblemAnswer(status = 422, errorCodes = "AMOUNT_MISMATCH")
  public ResponseEntity<PaidResponse> confirmPayment(
      Principal tenant, @PathVariable UUID orderId, @Valid @RequestBody ConfirmPayment request) {
    OrderResponse order =
        orders.find(tenant.getName(), orderId, true).orElseThrow(() -> orderNotFound(orderId));
    // The command first, whatever the order's state: a wrong amount is refused even on a paid
    // order, so that "PAID" is never the answer to a confirmation of another amount.
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
    if ("PAID".equals(order.status())) {
      return ResponseEntity.ok(new PaidResponse(order.orderId(), "PAID", order.paidAt()));
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
