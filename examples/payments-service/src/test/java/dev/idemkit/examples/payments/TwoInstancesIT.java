package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/** Two application instances on one PostgreSQL race the same key: one payment. */
class TwoInstancesIT extends HttpTestSupport {

  static ConfigurableApplicationContext second;

  @BeforeAll
  static void startSecondInstance() {
    // Same embedded data directory, hence the same PostgreSQL; its own port, pool and engine.
    second =
        new SpringApplicationBuilder(PaymentsApplication.class)
            .properties(
                "server.port=0", "spring.jmx.enabled=false", "payments.mail.embedded-port=0")
            .run();
  }

  @AfterAll
  static void stopSecondInstance() {
    second.close();
  }

  private static int secondPort() {
    return Integer.parseInt(second.getBean(Environment.class).getProperty("local.server.port"));
  }

  @Test
  void twoInstancesRacingOneKeyMakeOnePayment() throws Exception {
    assertThat(secondPort()).isNotEqualTo(port);
    String key = newKey();
    String ref = "two-" + key;
    String body = payment(ref, "10.00");
    URI one = uri("/v1/payments");
    URI two = URI.create("http://localhost:" + secondPort() + "/v1/payments");

    List<HttpResponse<String>> responses =
        ConcurrencyIT.race(
            40,
            List.of(
                ConcurrencyIT.paymentRequest(one, key, body),
                ConcurrencyIT.paymentRequest(two, key, body)));

    ConcurrencyIT.assertOnePayment(responses);
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(recordsFor(key)).isEqualTo(1);
  }
}
