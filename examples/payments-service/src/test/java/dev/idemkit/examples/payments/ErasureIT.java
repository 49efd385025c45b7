package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A tenant's erasure does what it says: its payments, orders, ledger entries, receipts, shipments
 * and the payloads of its events and receipt mails are gone, its data keys destroyed; its records
 * stay so that a retry answers 410 and runs nothing; another tenant's data is untouched.
 */
class ErasureIT extends HttpTestSupport {

  private static final String TENANT = "sk_test_erase";
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** Every table the tenant's rows live in, with how to count them. */
  private static final List<String> COUNTS =
      List.of(
          "select count(*) from payment where tenant_id = ?",
          "select count(*) from shop_order where tenant_id = ?",
          "select count(*) from shop_order_item i join shop_order o on o.id = i.order_id"
              + " where o.tenant_id = ?",
          "select count(*) from ledger_entry where tenant_id = ?",
          "select count(*) from receipt where tenant_id = ?",
          "select count(*) from shipment where tenant_id = ?",
          "select count(*) from idemkit_outbox where tenant = ?",
          "select count(*) from idemkit_inbox where tenant = ?",
          "select count(*) from idemkit_data_key where tenant = ?",
          "select count(*) from idemkit_delivery d where d.delivery_key like 'receipt_payment_%'"
              + " and substr(d.delivery_key, 17) in"
              + " (select id::text from payment where tenant_id = ?)");

  @Test
  void erasureLeavesNoRowOfTheTenantAndAnswers410ToItsRetries() throws Exception {
    String key = newKey();
    String body = payment("erase-" + UUID.randomUUID(), "12.50");
    HttpResponse<String> paid = post("/v1/payments", TENANT, key, body);
    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(201);
    String paymentId = JSON.readTree(paid.body()).get("paymentId").asString();
    HttpResponse<String> order =
        post(
            "/v1/orders",
            TENANT,
            newKey(),
            "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"book\",\"quantity\":2,\"unitPrice\":\"12.50\"}]}");
    assertThat(order.statusCode()).as(order.body()).isEqualTo(201);
    String orderId = JSON.readTree(order.body()).get("orderId").asString();
    HttpResponse<String> confirmed =
        post(
            "/v1/orders/" + orderId + "/confirm-payment",
            TENANT,
            newKey(),
            "{\"amount\":\"25.00\",\"currency\":\"EUR\"}");
    assertThat(confirmed.statusCode()).as(confirmed.body()).isIn(200, 201);
    String other = "erase-other-" + UUID.randomUUID();
    assertThat(post("/v1/payments", TENANT_A, newKey(), payment(other, "3.00")).statusCode())
        .isEqualTo(201);
    EventsIT.await(
        "the tenant's events reach the ledger, the receipts and shipping",
        () ->
            count("select count(*) from ledger_entry where tenant_id = ?") >= 2
                && count("select count(*) from receipt where tenant_id = ?") >= 1
                && count("select count(*) from shipment where tenant_id = ?") >= 1);

    HttpResponse<String> erased = delete("/v1/admin/tenants/tenant_erase/data");

    assertThat(erased.statusCode()).as(erased.body()).isEqualTo(200);
    JsonNode answer = JSON.readTree(erased.body());
    assertThat(answer.get("tenant").asString()).isEqualTo("tenant_erase");
    assertThat(answer.get("erasedRows").get("payment").asInt()).isGreaterThanOrEqualTo(1);
    assertThat(answer.get("erasedRows").get("ledger_entry").asInt()).isGreaterThanOrEqualTo(2);
    assertThat(answer.get("erasedRows").get("shipment").asInt()).isEqualTo(1);
    assertThat(answer.get("destroyedKeys").asInt()).isGreaterThanOrEqualTo(1);
    for (String sql : COUNTS) {
      assertThat(count(sql)).as(sql).isZero();
    }
    assertThat(get("/v1/payments/" + paymentId, TENANT).statusCode()).isEqualTo(404);

    // The record stays: the retry answers 410 and creates nothing again.
    HttpResponse<String> retry = post("/v1/payments", TENANT, key, body);
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(410);
    assertThat(retry.body()).contains("IDEMPOTENCY_RECORD_UNREADABLE");
    assertThat(count("select count(*) from payment where tenant_id = ?")).isZero();

    // Another tenant's data is untouched.
    assertThat(paymentsFor(other)).isEqualTo(1);

    // Again: nothing left to erase.
    HttpResponse<String> again = delete("/v1/admin/tenants/tenant_erase/data");
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(again.body()).get("erasedRows").get("payment").asInt()).isZero();
  }

  @Test
  void aNameThatIsNoTenantIsNotFoundAndTenantsOnlyMayNotErase() {
    HttpResponse<String> unknown =
        delete(
            "/v1/admin/tenants/tenant_nobody_"
                + UUID.randomUUID().toString().substring(0, 8)
                + "/data");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.body()).contains("TENANT_NOT_FOUND");

    HttpResponse<String> byTenant =
        send(
            HttpRequest.newBuilder(uri("/v1/admin/tenants/tenant_demo_a/data"))
                .header("Authorization", "Bearer " + TENANT_A)
                .DELETE()
                .build());
    assertThat(byTenant.statusCode()).isEqualTo(403);
  }

  private long count(String sql) {
    return jdbc.sql(sql).param("tenant_erase").query(Long.class).single();
  }

  private HttpResponse<String> delete(String path) {
    return send(
        HttpRequest.newBuilder(uri(path))
            .header("Authorization", "Bearer sk_test_admin")
            .DELETE()
            .build());
  }
}
