package dev.idemkit.examples.payments.orders;

import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spring.boot.IdempotentReference;
import java.util.Optional;
import java.util.UUID;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code create_order} replays by reference (Stripe's v2 behaviour): its record keeps only the
 * order's id, and a retry gets the order as it is now, marked {@code Idempotent-Replayed: true}. It
 * fits an answer that is the created resource itself and holds nothing the client could not read
 * again with {@code GET}: nothing of the order is kept in the idempotency table, and a client that
 * retries after the order was paid sees it paid. It does not fit an answer the client must get
 * exactly once as it was (a payment's charge result: {@code create_payment} keeps its body,
 * encrypted).
 */
@Component
public class OrderReplay implements IdempotentReference {

  private final OrderRepository orders;
  private final JsonMapper mapper;

  public OrderReplay(OrderRepository orders, JsonMapper mapper) {
    this.orders = orders;
    this.mapper = mapper;
  }

  @Override
  public String operation() {
    return "create_order";
  }

  @Override
  public String resourceType() {
    return "order";
  }

  @Override
  public Optional<StoredResponse> rebuild(
      ScopedKey id, String resourceType, String resourceId, StoredResponse stored) {
    UUID orderId;
    try {
      orderId = UUID.fromString(resourceId);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    return orders
        .find(id.tenant(), orderId, false)
        .map(
            order ->
                new StoredResponse(
                    stored.status(),
                    stored.headers(),
                    mapper.writeValueAsBytes(order),
                    stored.schemaVersion(),
                    resourceId));
  }
}
