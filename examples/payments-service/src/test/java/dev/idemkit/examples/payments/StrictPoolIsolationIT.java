package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * The pool's connections default to REPEATABLE READ. The idempotency record's transactions still
 * run at READ COMMITTED, so concurrent identical requests get the payment, its replay or 409, never
 * a 500 "could not serialize access", and one payment exists.
 */
@TestPropertySource(
    properties = "spring.datasource.hikari.transaction-isolation=TRANSACTION_REPEATABLE_READ")
class StrictPoolIsolationIT extends HttpTestSupport {

  @Test
  void theConnectionsReallyDefaultToRepeatableRead() {
    assertThat(jdbc.sql("show transaction_isolation").query(String.class).single())
        .isEqualTo("repeatable read");
  }

  @Test
  void twentyFourConcurrentIdenticalRequestsMakeOnePayment() throws Exception {
    for (int round = 0; round < 3; round++) {
      String key = newKey();
      String ref = "rr-race-" + key;
      HttpRequest request =
          ConcurrencyIT.paymentRequest(uri("/v1/payments"), key, payment(ref, "10.00"));

      List<HttpResponse<String>> responses = ConcurrencyIT.race(24, List.of(request));

      // 409 only for a duplicate whose wait for the first answer ran out; all 201 is as good.
      assertThat(responses).extracting(HttpResponse::statusCode).isSubsetOf(201, 409);
      ConcurrencyIT.assertOnePayment(responses);
      assertThat(paymentsFor(ref)).isEqualTo(1);
    }
  }
}
