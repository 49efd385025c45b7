package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * A deployment that configures keys of its own: the demo keys this jar ships (tenants {@code
 * sk_test_demo_a}/{@code _b}, operator {@code sk_test_admin}) are refused, 401, and leave nothing
 * behind; its own keys work. Spring merges map properties, so demo keys under the same map would
 * stay active beside the deployment's own.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "payments.provider.embedded-port=0",
      "payments.mail.embedded-port=0",
      "payments.api-keys.sk_live_own_tenant=tenant_own",
      "payments.admin-api-keys.sk_live_own_operator=own_operator"
    })
class OwnApiKeysIT extends HttpTestSupport {

  static final String OWN_TENANT = "sk_live_own_tenant";
  static final String OWN_OPERATOR = "sk_live_own_operator";
  static final String ORDER =
      "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"own-keys\",\"quantity\":1,\"unitPrice\":\"3\"}]}";

  @Test
  void theDemoKeysAreRefusedOnceTheDeploymentHasKeysOfItsOwn() {
    // The test classes share one database: other classes' demo tenants have orders of their own.
    long demoOrdersBefore = orders("tenant_demo_a") + orders("tenant_demo_b");
    for (String demo : new String[] {TENANT_A, TENANT_B, "sk_test_admin"}) {
      String key = newKey();
      HttpResponse<String> order = post("/v1/orders", demo, key, ORDER);
      HttpResponse<String> admin = get("/v1/admin/idempotency/recovery", demo);

      assertThat(order.statusCode()).as(demo).isEqualTo(401);
      assertThat(order.body()).contains("\"errorCode\":\"AUTHENTICATION_REQUIRED\"");
      assertThat(admin.statusCode()).as(demo).isEqualTo(401);
      assertThat(admin.body()).doesNotContain("\"records\"");
      assertThat(recordsFor(key)).isZero();
    }
    assertThat(orders("tenant_demo_a") + orders("tenant_demo_b")).isEqualTo(demoOrdersBefore);
  }

  @Test
  void theDeploymentsOwnKeysWork() {
    String key = newKey();
    HttpResponse<String> order = post("/v1/orders", OWN_TENANT, key, ORDER);
    HttpResponse<String> admin = get("/v1/admin/idempotency/recovery", OWN_OPERATOR);

    assertThat(order.statusCode()).isEqualTo(201);
    assertThat(orders("tenant_own")).isEqualTo(1);
    assertThat(admin.statusCode()).isEqualTo(200);
    assertThat(admin.body()).contains("\"records\"");
    // Each key stays in its own area.
    assertThat(get("/v1/admin/idempotency/recovery", OWN_TENANT).statusCode()).isEqualTo(403);
    assertThat(post("/v1/orders", OWN_OPERATOR, newKey(), ORDER).statusCode()).isEqualTo(403);
  }

  long orders(String tenant) {
    return jdbc.sql("select count(*) from shop_order where tenant_id = ?")
        .param(tenant)
        .query(Long.class)
        .single();
  }
}
