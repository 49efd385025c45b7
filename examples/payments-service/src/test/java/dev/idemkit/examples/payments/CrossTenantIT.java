package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Keys are scoped to the tenant: the same key elsewhere is another operation, and invisible. */
class CrossTenantIT extends HttpTestSupport {

  @Test
  void theSameKeyUnderTwoTenantsMakesTwoPaymentsAndNeitherSeesTheOther() {
    String key = newKey();
    String ref = "tenant-" + key;
    HttpResponse<String> a = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    HttpResponse<String> b = post("/v1/payments", TENANT_B, key, payment(ref, "99.00"));
    HttpResponse<String> bAgain = post("/v1/payments", TENANT_B, key, payment(ref, "99.00"));

    assertThat(a.statusCode()).isEqualTo(201);
    assertThat(b.statusCode()).as("B's different amount is not a mismatch with A's").isEqualTo(201);
    assertThat(b.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(bAgain.body()).isEqualTo(b.body()).doesNotContain(a.body());
    assertThat(paymentsFor(ref)).isEqualTo(2);
    assertThat(recordsFor(key)).isEqualTo(2);

    String aLocation = a.headers().firstValue("Location").orElseThrow();
    String bLocation = b.headers().firstValue("Location").orElseThrow();
    assertThat(get(aLocation, TENANT_A).statusCode()).isEqualTo(200);
    HttpResponse<String> peek = get(aLocation, TENANT_B);
    assertThat(peek.statusCode()).isEqualTo(404);
    assertThat(peek.body()).contains("PAYMENT_NOT_FOUND").doesNotContain("acc_1");
    assertThat(get(bLocation, TENANT_A).statusCode()).isEqualTo(404);
  }

  @Test
  void anotherTenantsBusyKeyIsNotVisible() {
    String key = newKey();
    post("/v1/payments", TENANT_A, key, payment("busy-" + key, "10.00"));
    // A mismatching body under tenant B is simply B's first request: nothing leaks from A's scope.
    HttpResponse<String> b = post("/v1/payments", TENANT_B, key, payment("other-" + key, "5.00"));
    assertThat(b.statusCode()).isEqualTo(201);
    assertThat(b.body()).doesNotContain("busy-");
  }

  @Test
  void theListOfPaymentsByMerchantReferenceShowsOnlyTheTenantsOwn() {
    String key = newKey();
    String ref = "list-" + key;
    HttpResponse<String> a = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    HttpResponse<String> aAgain = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    HttpResponse<String> b = post("/v1/payments", TENANT_B, newKey(), payment(ref, "99.00"));
    assertThat(List.of(a.statusCode(), aAgain.statusCode(), b.statusCode()))
        .containsExactly(201, 201, 201);
    String aId = paymentId(a);

    HttpResponse<String> listA = get("/v1/payments?merchantReference=" + ref, TENANT_A);
    HttpResponse<String> listB = get("/v1/payments?merchantReference=" + ref, TENANT_B);

    assertThat(listA.statusCode()).isEqualTo(200);
    assertThat(listA.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
    // A JSON array of the tenant's one payment (the retry made none), as GET of its id shows it.
    assertThat(listA.body())
        .isEqualTo("[" + get("/v1/payments/" + aId, TENANT_A).body() + "]")
        .contains("\"amount\":\"10.00\"")
        .doesNotContain("99.00");
    assertThat(listB.body()).startsWith("[{").contains(paymentId(b)).doesNotContain(aId);
    assertThat(paymentsFor(ref)).isEqualTo(2);
    assertThat(get("/v1/payments?merchantReference=" + ref + "&accountId=acc_1", TENANT_A).body())
        .contains(aId);
    assertThat(
            get("/v1/payments?merchantReference=" + ref + "&accountId=acc_other", TENANT_A).body())
        .isEqualTo("[]");
    assertThat(get("/v1/payments?merchantReference=none-" + key, TENANT_A).body()).isEqualTo("[]");
  }

  @Test
  void listingPaymentsWithoutAMerchantReferenceIsRefused() {
    HttpResponse<String> r = get("/v1/payments", TENANT_A);

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("MISSING_QUERY_PARAMETER").contains("merchantReference");
    assertThat(get("/v1/payments?merchantReference=x", "sk_test_unknown").statusCode())
        .isEqualTo(401);
  }

  private static String paymentId(HttpResponse<String> created) {
    String location = created.headers().firstValue("Location").orElseThrow();
    return location.substring(location.lastIndexOf('/') + 1);
  }
}
