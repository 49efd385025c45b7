package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The embedded demo as shipped, with no key of its own: the demo tenants' keys and the demo
 * operator key work, as the README's curl lines use them.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"payments.provider.embedded-port=0", "payments.mail.embedded-port=0"})
class DemoApiKeysIT extends HttpTestSupport {

  @Test
  void withNoKeysOfItsOwnTheDemoKeysWork() {
    assertThat(post("/v1/orders", TENANT_A, newKey(), OwnApiKeysIT.ORDER).statusCode())
        .isEqualTo(201);
    assertThat(post("/v1/orders", TENANT_B, newKey(), OwnApiKeysIT.ORDER).statusCode())
        .isEqualTo(201);
    assertThat(get("/v1/admin/idempotency/recovery", "sk_test_admin").statusCode()).isEqualTo(200);
    assertThat(post("/v1/orders", OwnApiKeysIT.OWN_TENANT, newKey(), OwnApiKeysIT.ORDER))
        .satisfies(r -> assertThat(r.statusCode()).isEqualTo(401));
  }
}
