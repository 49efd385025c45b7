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
    String key = newKey();
    String ref = "large-" + key;
    int errorsBefore = ERRORS.size();

    HttpResponse<String> r = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(r.body()).contains("IDEMPOTENCY_RESPONSE_TOO_LARGE");
    assertThat(paymentsFor(ref)).isZero();
    assertThat(recordsFor(key)).isZero();
    assertThat(ERRORS.size())
        .as("a misconfiguration is logged at ERROR")
        .isGreaterThan(errorsBefore);
    ERRORS.subList(errorsBefore, ERRORS.size()).clear();
  }
}
