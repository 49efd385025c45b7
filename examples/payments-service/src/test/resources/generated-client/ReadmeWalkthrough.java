import dev.idemkit.examples.client.ApiClient;
import dev.idemkit.examples.client.ApiException;
import dev.idemkit.examples.client.ApiResponse;
import dev.idemkit.examples.client.api.LedgerApi;
import dev.idemkit.examples.client.api.OrdersApi;
import dev.idemkit.examples.client.api.PaymentsApi;
import dev.idemkit.examples.client.model.ConfirmPayment;
import dev.idemkit.examples.client.model.CreateOrder;
import dev.idemkit.examples.client.model.CreatePaymentRequest;
import dev.idemkit.examples.client.model.Item;
import dev.idemkit.examples.client.model.LedgerEntries;
import dev.idemkit.examples.client.model.OrderResponse;
import dev.idemkit.examples.client.model.PaidResponse;
import dev.idemkit.examples.client.model.PaymentResponse;
import dev.idemkit.examples.client.model.Problem;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The walk-through of the README and docs/payments-service.md, written against the client generated from the service's OpenAPI
 * document (compiled and run by GeneratedClientIT). It returns what it saw; the test asserts.
 */
public class ReadmeWalkthrough implements Function<Map<String, String>, Map<String, Object>> {

  @Override
  public Map<String, Object> apply(Map<String, String> config) {
    Map<String, Object> seen = new LinkedHashMap<>();
    ApiClient client = new ApiClient();
    client.updateBaseUri(config.get("baseUri"));
    client.setRequestInterceptor(
        request -> request.header("Authorization", "Bearer " + config.get("apiKey")));
    PaymentsApi payments = new PaymentsApi(client);
    OrdersApi orders = new OrdersApi(client);
    String key = config.get("key");
    try {
      // Create a payment; the same command again is the client's retry after a lost answer.
      CreatePaymentRequest command =
          new CreatePaymentRequest()
              .accountId("acc_1")
              .amount("10.00")
              .currency("EUR")
              .merchantReference(config.get("merchantReference"));
      ApiResponse<PaymentResponse> created = payments.createPaymentWithHttpInfo(key, command);
      seen.put("created.status", created.getStatusCode());
      seen.put("created.paymentId", created.getData().getPaymentId());
      seen.put("created.location", first(created.getHeaders(), "location"));

      ApiResponse<PaymentResponse> replay = payments.createPaymentWithHttpInfo(key, command);
      seen.put("replay.status", replay.getStatusCode());
      seen.put("replay.paymentId", replay.getData().getPaymentId());
      seen.put("replay.Idempotent-Replayed", first(replay.getHeaders(), "idempotent-replayed"));

      // The same key with a different amount is refused, never replayed.
      try {
        payments.createPaymentWithHttpInfo(key, command.amount("99.00"));
        seen.put("mismatch.status", 200);
      } catch (ApiException e) {
        seen.put("mismatch.status", e.getCode());
        seen.put(
            "mismatch.errorCode",
            client.getObjectMapper().readValue(e.getResponseBody(), Problem.class).getErrorCode());
      }

      PaymentResponse fetched = payments.getPayment(created.getData().getPaymentId());
      seen.put("get.status", fetched.getStatus());

      // The ledger books the payment shortly after; its entries come typed.
      LedgerEntries ledger = new LedgerApi(client).listLedgerEntries(fetched.getPaymentId());
      for (int i = 0; i < 100 && ledger.getEntries().isEmpty(); i++) {
        Thread.sleep(100);
        ledger = new LedgerApi(client).listLedgerEntries(fetched.getPaymentId());
      }
      seen.put("ledger.entries", ledger.getEntries().size());
      seen.put("ledger.firstDirection", ledger.getEntries().get(0).getDirection().getValue());

      // The mini shop: an order, and confirming its payment once.
      ApiResponse<OrderResponse> order =
          orders.createOrderWithHttpInfo(
              UUID.randomUUID().toString(),
              new CreateOrder()
                  .currency("EUR")
                  .items(List.of(new Item().sku("book").quantity(2).unitPrice("12.50"))));
      seen.put("order.status", order.getStatusCode());
      seen.put("order.total", order.getData().getTotal());
      ApiResponse<PaidResponse> confirmed =
          orders.confirmOrderPaymentWithHttpInfo(
              order.getData().getOrderId(),
              UUID.randomUUID().toString(),
              new ConfirmPayment().amount("25.00").currency("EUR"));
      seen.put("confirm.status", confirmed.getStatusCode());
      seen.put("confirm.orderStatus", confirmed.getData().getStatus());
    } catch (ApiException e) {
      seen.put("failure", e.getCode() + " " + e.getResponseBody());
    } catch (Exception e) {
      seen.put("failure", e.toString());
    }
    return seen;
  }

  private static String first(Map<String, List<String>> headers, String name) {
    for (Map.Entry<String, List<String>> header : headers.entrySet()) {
      if (header.getKey().equalsIgnoreCase(name) && !header.getValue().isEmpty()) {
        return header.getValue().get(0);
      }
    }
    return null;
  }
}
