package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.json.JsonMapper;

/**
 * contract §4 (docs/contract.md): the fingerprint is of the command's meaning. Requests the API
 * treats as equal replay each other under one key; requests that differ in meaning are a 422. A
 * reference is compared in one Unicode form (NFC), so spellings that look the same are the same.
 */
class NormalizationIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Autowired EmbeddedProvider provider;

  private HttpResponse<String> pay(String key, String json) {
    return post("/v1/payments", TENANT_A, key, json);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "amount 10 = 10.00 | {\"accountId\":\"acc_1\",\"amount\":\"10\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "amount 10.0 = 10.00 | {\"accountId\":\"acc_1\",\"amount\":\"10.0\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "currency case | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"eur\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "absent channel = web | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\",\"channel\":\"web\"}",
        "channel case | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\",\"channel\":\"WEB\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\",\"channel\":\"web\"}",
        "field order and spacing | {\"merchantReference\":\"REF\",  \"currency\":\"EUR\", \"amount\":\"10.00\", \"accountId\":\"acc_1\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "JPY without decimals | {\"accountId\":\"acc_1\",\"amount\":\"1000\",\"currency\":\"JPY\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"1000.000\",\"currency\":\"jpy\",\"merchantReference\":\"REF\"}",
      })
  void equalCommandsReplayEachOther(String name, String first, String second) {
    String key = newKey();
    String ref = "norm-" + key;
    HttpResponse<String> a = pay(key, first.replace("REF", ref));
    HttpResponse<String> b = pay(key, second.replace("REF", ref));

    assertThat(a.statusCode()).as(a.body()).isEqualTo(201);
    assertThat(b.statusCode()).as(b.body()).isEqualTo(201);
    assertThat(b.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(b.body()).isEqualTo(a.body());
    assertThat(paymentsFor(ref)).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another amount | {\"accountId\":\"acc_1\",\"amount\":\"10.01\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "another currency | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"USD\",\"merchantReference\":\"REF\"}",
        "another channel | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\",\"channel\":\"mobile\"}",
        "another account | {\"accountId\":\"acc_2\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
        "another reference | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF-2\"}",
      })
  void differentCommandsUnderOneKeyAreRefused(String name, String changed) {
    String key = newKey();
    String ref = "norm-" + key;
    HttpResponse<String> a =
        pay(
            key,
            "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}"
                .replace("REF", ref));
    HttpResponse<String> b = pay(key, changed.replace("REF", ref));

    assertThat(a.statusCode()).isEqualTo(201);
    assertThat(b.statusCode()).as(b.body()).isEqualTo(422);
    assertThat(b.body()).contains("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(paymentsFor(ref)).isEqualTo(1);
    assertThat(paymentsFor(ref + "-2")).isZero();
  }

  /**
   * A merchant reference is compared in one form, NFC: {@code café} with {@code é} and with {@code
   * e} + U+0301 look the same and are one payment and one charge, under one key (a replay) or two
   * (the business key's 409). The same with an invisible U+200B, or with a right-to-left override,
   * is refused with a 400 that names the character, and is neither stored nor charged.
   */
  @Test
  void spellingsThatLookTheSameAreOnePaymentAndOneCharge() {
    String suffix = "-" + UUID.randomUUID();
    String nfc = "caf\u00e9-order-77" + suffix;
    String nfd = "cafe\u0301-order-77" + suffix;
    String key = newKey();

    HttpResponse<String> first = pay(key, payment(nfc, "10.00"));
    HttpResponse<String> sameKey = pay(key, payment(nfd, "10.00"));
    HttpResponse<String> otherKey = pay(newKey(), payment(nfd, "10.00"));
    String zeroWidthKey = newKey();
    HttpResponse<String> zeroWidth = pay(zeroWidthKey, payment(nfc + "\u200b", "10.00"));
    String overrideKey = newKey();
    HttpResponse<String> override = pay(overrideKey, payment("\u202e" + nfc, "10.00"));

    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(sameKey.statusCode()).as(sameKey.body()).isEqualTo(201);
    assertThat(sameKey.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(sameKey.body()).isEqualTo(first.body());
    assertThat(otherKey.statusCode()).as(otherKey.body()).isEqualTo(409);
    assertThat(otherKey.body()).contains("PAYMENT_ALREADY_EXISTS");
    assertThat(zeroWidth.statusCode()).as(zeroWidth.body()).isEqualTo(400);
    assertThat(zeroWidth.body())
        .contains("VALIDATION_FAILED")
        .contains(
            "merchantReference has U+200B (an invisible format character) at position "
                + (nfc.length() + 1));
    assertThat(override.statusCode()).as(override.body()).isEqualTo(400);
    assertThat(override.body())
        .contains("merchantReference has U+202E (a bidirectional control) at position 1");
    assertThat(recordsFor(zeroWidthKey)).isZero();
    assertThat(recordsFor(overrideKey)).isZero();

    List<String> stored =
        jdbc.sql("select merchant_reference from payment where merchant_reference like ?")
            .param("%" + suffix)
            .query(String.class)
            .list();
    assertThat(stored).as("one payment, in NFC").containsExactly(nfc);
    String paymentId = JSON.readTree(first.body()).get("paymentId").asString();
    assertThat(charges(paymentId)).as("charged once").contains("\"succeeded\":1");

    // A lookup in either spelling finds it; one with an invisible character is refused.
    for (String spelling : List.of(nfc, nfd)) {
      HttpResponse<String> found =
          get(
              "/v1/payments?merchantReference="
                  + URLEncoder.encode(spelling, StandardCharsets.UTF_8),
              TENANT_A);
      assertThat(found.statusCode()).as(found.body()).isEqualTo(200);
      assertThat(found.body()).contains(paymentId);
    }
    HttpResponse<String> invisible =
        get(
            "/v1/payments?merchantReference="
                + URLEncoder.encode(nfc + "\u200b", StandardCharsets.UTF_8),
            TENANT_A);
    assertThat(invisible.statusCode()).as(invisible.body()).isEqualTo(400);
    assertThat(invisible.body())
        .contains("INVALID_QUERY_PARAMETER")
        .contains("merchantReference has U+200B");
  }

  /** An order item's sku is a reference too: both spellings under one key are one order. */
  @Test
  void anOrderWithTheSkuInEitherSpellingIsOneOrder() {
    String key = newKey();
    String line =
        "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"%s\",\"quantity\":1,"
            + "\"unitPrice\":\"4.00\"}]}";
    HttpResponse<String> first = post("/v1/orders", TENANT_A, key, line.formatted("cr\u00e8me"));
    HttpResponse<String> second = post("/v1/orders", TENANT_A, key, line.formatted("cre\u0300me"));

    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(second.statusCode()).as(second.body()).isEqualTo(201);
    assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    String orderId = JSON.readTree(first.body()).get("orderId").asString();
    assertThat(
            jdbc.sql("select sku from shop_order_item where order_id = ?::uuid")
                .param(orderId)
                .query(String.class)
                .list())
        .containsExactly("cr\u00e8me");
  }

  /**
   * Migration V6 rewrites references stored before in another form to NFC, and never breaks the
   * business key doing so: a reference whose NFC form the account already holds keeps its spelling,
   * and of several that meet in one NFC form only the oldest is rewritten. Run here on rows of a
   * tenant of its own (the service ran it at start-up, on no such row).
   */
  @Test
  void theMigrationRewritesStoredReferencesToNfcAndKeepsTheBusinessKey() throws Exception {
    String tenant = "tenant_nfc_" + UUID.randomUUID().toString().replace("-", "");
    String nfc = "caf\u00e9";
    String nfd = "cafe\u0301";
    // Two spellings of e with a dot below and an acute: neither is NFC, both become "\u1eb9\u0301".
    String marksBelowFirst = "e\u0323\u0301";
    String marksAboveFirst = "e\u0301\u0323";
    insertPayment(tenant, "acc_alone", nfd, 1);
    insertPayment(tenant, "acc_both", nfc, 1);
    insertPayment(tenant, "acc_both", nfd, 2);
    insertPayment(tenant, "acc_meet", marksAboveFirst, 1);
    insertPayment(tenant, "acc_meet", marksBelowFirst, 2);

    String migration =
        new String(
            getClass()
                .getResourceAsStream("/db/migration/V6__merchant_references_nfc.sql")
                .readAllBytes(),
            StandardCharsets.UTF_8);
    jdbc.sql(migration).update();

    assertThat(referencesOf(tenant, "acc_alone")).containsExactly(nfc);
    assertThat(referencesOf(tenant, "acc_both")).containsExactly(nfc, nfd);
    assertThat(referencesOf(tenant, "acc_meet")).containsExactly("\u1eb9\u0301", marksBelowFirst);
  }

  private void insertPayment(String tenant, String account, String reference, int minute) {
    jdbc.sql(
            """
            insert into payment (id, tenant_id, account_id, amount, currency, merchant_reference,
                                 channel, status, created_at)
            values (gen_random_uuid(), ?, ?, 1.00, 'EUR', ?, 'web', 'COMPLETED',
                    timestamptz '2026-01-01 00:00:00+00' + make_interval(mins => ?))
            """)
        .params(tenant, account, reference, minute)
        .update();
  }

  private List<String> referencesOf(String tenant, String account) {
    return jdbc.sql(
            "select merchant_reference from payment where tenant_id = ? and account_id = ?"
                + " order by created_at")
        .params(tenant, account)
        .query(String.class)
        .list();
  }

  private String charges(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(provider.baseUrl() + "/charges?reference=" + paymentId))
            .build())
        .body();
  }

  @ParameterizedTest(name = "API version {0} then {1}")
  @CsvSource({"2026-01-01,2026-06-01", ",2026-06-01"})
  void theApiVersionHeaderIsPartOfTheCommand(String firstVersion, String secondVersion) {
    String key = newKey();
    String body = payment("norm-" + key, "10.00");
    HttpResponse<String> a = send(withVersion(key, body, firstVersion));
    HttpResponse<String> same = send(withVersion(key, body, firstVersion));
    HttpResponse<String> other = send(withVersion(key, body, secondVersion));

    assertThat(a.statusCode()).isEqualTo(201);
    assertThat(same.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(other.statusCode()).isEqualTo(422);
  }

  private HttpRequest withVersion(String key, String body, String version) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/v1/payments"))
            .header("Authorization", "Bearer " + TENANT_A)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (version != null) {
      b.header("Api-Version", version);
    }
    return b.build();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "over-precise EUR | 10.001 | EUR",
        "JPY with decimals | 10.5 | JPY",
        "unknown currency | 10.00 | XYZ",
      })
  void invalidAmountsAre400AndStoreNothing(String name, String amount, String currency) {
    String key = newKey();
    HttpResponse<String> r =
        pay(
            key,
            "{\"accountId\":\"acc_1\",\"amount\":\"%s\",\"currency\":\"%s\",\"merchantReference\":\"bad-%s\"}"
                .formatted(amount, currency, key));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("VALIDATION_FAILED");
    assertThat(recordsFor(key)).isZero();
  }
}
