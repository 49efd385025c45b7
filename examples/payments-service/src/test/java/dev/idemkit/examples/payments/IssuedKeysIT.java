package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.spring.boot.IssuedKeys;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.TestPropertySource;

/** Server-issued keys (seed 001) and an operation in strict mode that takes no other key. */
@TestPropertySource(
    properties = {
      "idemkit.issued-keys.strict-operations=create_payment",
      "idemkit.issued-keys.secret=a-test-secret-of-sufficient-length"
    })
class IssuedKeysIT extends HttpTestSupport {

  /** The issued keys' clock, moved by the tests: a key's validity ends without waiting. */
  static final class TestClock extends Clock {
    private volatile Instant now = Instant.now();

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }

  @TestConfiguration
  static class KeysOnATestClock {
    @Bean
    TestClock issuedKeysClock() {
      return new TestClock();
    }

    @Bean
    IssuedKeys issuedKeys(TestClock clock) {
      return new IssuedKeys(
          "a-test-secret-of-sufficient-length".getBytes(StandardCharsets.UTF_8),
          Duration.ofHours(1),
          Set.of("create_payment"),
          clock);
    }
  }

  @Autowired TestClock clock;

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
  void aRetryAfterTheKeysValidityIsAnsweredFromTheRecord() {
    String key = issue(TENANT_A, "create_payment");
    String unused = issue(TENANT_A, "create_payment");
    String ref = "late-" + key.substring(3, 12);
    HttpResponse<String> first = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);

    clock.advance(Duration.ofHours(2));
    HttpResponse<String> retry = post("/v1/payments", TENANT_A, key, payment(ref, "10.00"));
    HttpResponse<String> neverUsed =
        post("/v1/payments", TENANT_A, unused, payment(ref + "-2", "10.00"));

    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(neverUsed.statusCode()).isEqualTo(400);
    assertThat(neverUsed.body()).contains("IDEMPOTENCY_KEY_NOT_ISSUED");
    assertThat(recordsFor(unused)).isZero();
  }

  /**
   * Other Base64 spellings of the same bytes: {@code =} padding, and the unused low bits of the
   * MAC's last character (20 bytes are 27 characters: 162 bits, 2 of them unused).
   */
  static String[] variants(String key) {
    char last = key.charAt(key.length() - 1);
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int v = alphabet.indexOf(last);
    String head = key.substring(0, key.length() - 1);
    return new String[] {
      key + "=",
      head + alphabet.charAt(v ^ 1),
      head + alphabet.charAt(v ^ 2),
      head + alphabet.charAt(v ^ 3),
      head + alphabet.charAt(v ^ 1) + "=",
      // the prefix in another case: not an ordinary client key either
      key.toUpperCase(java.util.Locale.ROOT),
      "IK_" + key.substring(3),
      "Ik_" + key.substring(3)
    };
  }

  @Test
  void anIssuedKeyHasOneSpellingInAStrictOperation() {
    String key = issue(TENANT_A, "create_payment");
    String ref = "spelling-" + key.substring(3, 12);
    assertThat(post("/v1/payments", TENANT_A, key, payment(ref, "10.00")).statusCode())
        .isEqualTo(201);

    for (String variant : variants(key)) {
      HttpResponse<String> r =
          post("/v1/payments", TENANT_A, variant, payment(ref + variant.hashCode(), "10.00"));
      assertThat(r.statusCode()).as(variant + ": " + r.body()).isEqualTo(400);
      assertThat(r.body()).contains("IDEMPOTENCY_KEY_NOT_ISSUED");
      assertThat(recordsFor(variant)).isZero();
      assertThat(paymentsFor(ref + variant.hashCode())).isZero();
    }
    assertThat(paymentsFor(ref)).isEqualTo(1);
  }

  @Test
  void outsideStrictModeAKeyWithTheIssuedPrefixMustVerifyExactly() {
    String key = issue(TENANT_A, "create_order");
    String order =
        """
        {"currency":"EUR","items":[{"sku":"book","quantity":1,"unitPrice":"1.00"}]}""";
    assertThat(post("/v1/orders", TENANT_A, key, order).statusCode()).isEqualTo(201);
    String otherTenants = issue(TENANT_B, "create_order");

    for (String variant : append(variants(key), otherTenants, "ik_not-a-key")) {
      HttpResponse<String> r = post("/v1/orders", TENANT_A, variant, order);
      assertThat(r.statusCode()).as(variant + ": " + r.body()).isEqualTo(400);
      assertThat(r.body()).contains("IDEMPOTENCY_KEY_NOT_ISSUED");
      assertThat(recordsFor(variant)).isZero();
    }
    assertThat(post("/v1/orders", TENANT_A, newKey(), order).statusCode()).isEqualTo(201);
  }

  private static String[] append(String[] a, String... more) {
    String[] all = java.util.Arrays.copyOf(a, a.length + more.length);
    System.arraycopy(more, 0, all, a.length, more.length);
    return all;
  }

  @Test
  void keysAreIssuedOnlyForKnownOperations() {
    HttpResponse<String> r =
        post("/v1/idempotency-keys", TENANT_A, null, "{\"operation\":\"delete_everything\"}");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("VALIDATION_FAILED");
  }
}
