package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Each map of keys on its own: a deployment with an operator key of its own and no tenant key of
 * its own refuses the demo operator key and still accepts the demo tenants' keys (as the embedded
 * demo and the README do with no key of their own at all).
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "payments.provider.embedded-port=0",
      "payments.mail.embedded-port=0",
      "payments.admin-api-keys.sk_live_own_operator=own_operator"
    })
class OwnOperatorKeyIT extends HttpTestSupport {

  @Test
  void anOwnOperatorKeyEndsTheDemoOperatorKeyOnly() {
    HttpResponse<String> demoTenant = post("/v1/orders", TENANT_A, newKey(), OwnApiKeysIT.ORDER);
    HttpResponse<String> demoOperator = get("/v1/admin/idempotency/recovery", "sk_test_admin");
    HttpResponse<String> ownOperator =
        get("/v1/admin/idempotency/recovery", OwnApiKeysIT.OWN_OPERATOR);

    assertThat(demoTenant.statusCode()).isEqualTo(201);
    assertThat(demoOperator.statusCode()).isEqualTo(401);
    assertThat(demoOperator.body()).contains("\"errorCode\":\"AUTHENTICATION_REQUIRED\"");
    assertThat(ownOperator.statusCode()).isEqualTo(200);
  }
}
