package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** The mini shop: an order is paid once, whatever the client retries. */
class OrdersIT extends HttpTestSupport {

  private String createOrder() {
    HttpResponse<String> r =
        post(
            "/v1/orders",
            TENANT_A,
            newKey(),
            """
            {"currency":"EUR","items":[{"sku":"book","quantity":2,"unitPrice":"12.50"},
              {"sku":"pen","quantity":1,"unitPrice":"5"}]}""");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    assertThat(r.body()).contains("\"status\":\"PENDING_PAYMENT\"").contains("\"total\":\"30.00\"");
    String location = r.headers().firstValue("Location").orElseThrow();
    return location.substring(location.lastIndexOf('/') + 1);
  }

  private HttpResponse<String> confirm(String orderId, String key, String amount) {
    return post(
        "/v1/orders/" + orderId + "/confirm-payment",
        TENANT_A,
        key,
        "{\"amount\":\"" + amount + "\",\"currency\":\"EUR\"}");
  }

  @Test
  void confirmingPaymentIsIdempotentAndAPaidOrderAnswersTheSameUnderAnyKey() {
    String orderId = createOrder();
    String key = newKey();

    HttpResponse<String> first = confirm(orderId, key, "30.00");
    HttpResponse<String> retry = confirm(orderId, key, "30");
    HttpResponse<String> newKey = confirm(orderId, newKey(), "30.00");

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).contains("\"status\":\"PAID\"").contains(orderId);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(newKey.statusCode()).isEqualTo(200);
    assertThat(newKey.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(newKey.body()).isEqualTo(first.body());
    assertThat(get("/v1/orders/" + orderId, TENANT_A).body()).contains("\"status\":\"PAID\"");
  }

  @Test
  void anAmountThatIsNotTheTotalIsRefusedAndTheRefusalIsReplayed() {
    String orderId = createOrder();
    String key = newKey();

    HttpResponse<String> wrong = confirm(orderId, key, "29.99");
    HttpResponse<String> again = confirm(orderId, key, "29.99");

    assertThat(wrong.statusCode()).isEqualTo(422);
    assertThat(wrong.body()).contains("AMOUNT_MISMATCH");
    assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(get("/v1/orders/" + orderId, TENANT_A).body()).contains("PENDING_PAYMENT");
  }

  @Test
  void aPaidOrderStillRefusesAnotherAmountOrCurrency() {
    String orderId = createOrder();
    HttpResponse<String> paid = confirm(orderId, newKey(), "30.00");
    assertThat(paid.statusCode()).isEqualTo(200);

    HttpResponse<String> lessUnderNewKey = confirm(orderId, newKey(), "1.00");
    HttpResponse<String> otherCurrency =
        post(
            "/v1/orders/" + orderId + "/confirm-payment",
            TENANT_A,
            newKey(),
            "{\"amount\":\"30.00\",\"currency\":\"USD\"}");
    HttpResponse<String> rightAmount = confirm(orderId, newKey(), "30");

    assertThat(lessUnderNewKey.statusCode()).as(lessUnderNewKey.body()).isEqualTo(422);
    assertThat(lessUnderNewKey.body()).contains("AMOUNT_MISMATCH").doesNotContain("\"PAID\"");
    assertThat(otherCurrency.statusCode()).as(otherCurrency.body()).isEqualTo(422);
    assertThat(otherCurrency.body()).contains("AMOUNT_MISMATCH");
    assertThat(rightAmount.statusCode()).isEqualTo(200);
    assertThat(rightAmount.body()).isEqualTo(paid.body());
  }

  @Test
  void anotherTenantsOrderIsNotFound() {
    String orderId = createOrder();
    HttpResponse<String> r =
        post(
            "/v1/orders/" + orderId + "/confirm-payment",
            TENANT_B,
            newKey(),
            "{\"amount\":\"30.00\",\"currency\":\"EUR\"}");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(get("/v1/orders/" + orderId, TENANT_A).body()).contains("PENDING_PAYMENT");
  }

  @Test
  void aSecondPaymentForOneMerchantReferenceUnderAnotherKeyIs409NamingTheFirst() {
    String ref = "bizkey-" + newKey();
    HttpResponse<String> first = post("/v1/payments", TENANT_A, newKey(), payment(ref, "10.00"));
    String firstId =
        first.headers().firstValue("Location").orElseThrow().replace("/v1/payments/", "");
    String secondKey = newKey();

    HttpResponse<String> buggyRetry =
        post("/v1/payments", TENANT_A, secondKey, payment(ref, "10.00"));
    HttpResponse<String> again = post("/v1/payments", TENANT_A, secondKey, payment(ref, "10.00"));

    assertThat(buggyRetry.statusCode()).isEqualTo(409);
    assertThat(buggyRetry.body()).contains("PAYMENT_ALREADY_EXISTS").contains(firstId);
    assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(paymentsFor(ref)).isEqualTo(1);
  }
}
