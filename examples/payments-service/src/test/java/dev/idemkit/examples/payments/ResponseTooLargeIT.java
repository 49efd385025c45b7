package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * An answer too large to store for replay is not given: the operation rolls back and the client
 * gets a 500 that says so, so nothing happens that a retry could not replay.
 */
@TestPropertySource(properties = "idemkit.max-stored-response-bytes=64")
class ResponseTooLargeIT extends HttpTestSupport {

  @Test
  void aTooLargeAnswerRollsTheOperationBackAndSaysSo() {
    // The order itself, as an earlier request made it (its own answer is too large here).
    java.util.UUID orderId = java.util.UUID.randomUUID();
    jdbc.sql(
            "insert into shop_order (id, tenant_id, currency, total, status, created_at)"
                + " values (?, 'tenant_demo_a', 'EUR', 5.00, 'PENDING_PAYMENT', now())")
        .param(orderId)
        .update();
    String location = "/v1/orders/" + orderId;
    String key = newKey();
    int errorsBefore = ERRORS.size();

    HttpResponse<String> r =
        post(
            location + "/confirm-payment",
            TENANT_A,
            key,
            "{\"amount\":\"5.00\",\"currency\":\"EUR\"}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(r.body()).contains("IDEMPOTENCY_RESPONSE_TOO_LARGE");
    assertThat(recordsFor(key)).isZero();
    assertThat(get(location, TENANT_A).body()).as("rolled back").contains("PENDING_PAYMENT");
    assertThat(ERRORS.size())
        .as("a misconfiguration is logged at ERROR")
        .isGreaterThan(errorsBefore);
    ERRORS.subList(errorsBefore, ERRORS.size()).clear();
  }
}
