package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/** Server-issued keys (seed 001) and an operation in strict mode that takes no other key. */
@TestPropertySource(
    properties = {
      "idemkit.issued-keys.strict-operations=create_payment",
      "idemkit.issued-keys.secret=a-test-secret-of-sufficient-length"
    })
class IssuedKeysIT extends HttpTestSupport {

  private String issue(String apiKey, String operation) {
    HttpResponse<String> r =
        post("/v1/idempotency-keys", apiKey, null, "{\"operation\":\"" + operation + "\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    int at = r.body().indexOf("\"key\":\"") + 7;
    return r.body().substring(at, r.body().indexOf('"', at));
  }

  @Test
  void anIssuedKeyWorksAndRetriesWithIt() {
    String key = issue(TENANT_A, "create_payment");
    String ref = "issued-" + key.substring(3, 12);

    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    HttpResponse<String> retry = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));

    assertThat(key).startsWith("ik_").hasSizeLessThanOrEqualTo(255);
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(paymentsFor(ref)).isEqualTo(1);
  }

  @Test
  void strictModeRefusesKeysItDidNotIssueAndStoresNothing() {
    String clientKey = newKey();
    String otherTenants = issue(TENANT_B, "create_payment");
    String otherOperation = issue(TENANT_A, "confirm_payment");
    String tampered = issue(TENANT_A, "create_payment");
    tampered =
        tampered.substring(0, tampered.length() - 2) + (tampered.endsWith("AA") ? "BB" : "AA");

    for (String key : new String[] {clientKey, otherTenants, otherOperation, tampered}) {
      HttpResponse<String> r =
          post("/v1/payments", TENANT_A, key, payment("strict-" + key.hashCode(), "10.00"));
      assertThat(r.statusCode()).as(key).isEqualTo(400);
      assertThat(r.body()).contains("IDEMPOTENCY_KEY_NOT_ISSUED");
      assertThat(recordsFor(key)).isZero();
    }
  }

  @Test
  void keysAreIssuedOnlyForKnownOperations() {
    HttpResponse<String> r =
        post("/v1/idempotency-keys", TENANT_A, null, "{\"operation\":\"delete_everything\"}");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("VALIDATION_FAILED");
  }
}
