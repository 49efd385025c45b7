package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * contract §4 (docs/contract.md): the fingerprint is of the command's meaning. Requests the API
 * treats as equal replay each other under one key; requests that differ in meaning are a 422.
 */
class NormalizationIT extends HttpTestSupport {

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
        "JSON number amount | {\"accountId\":\"acc_1\",\"amount\":10,\"currency\":\"EUR\",\"merchantReference\":\"REF\"} | {\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"REF\"}",
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
