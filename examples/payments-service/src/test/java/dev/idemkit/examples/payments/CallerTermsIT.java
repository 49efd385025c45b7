package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Refusals speak the caller's language: the JSON field by its name and path, the rule in the API's
 * terms (sign, decimals the currency allows, ISO 4217), never a Java class, a synthetic property
 * ({@code amountValid}) or a message cut mid-word; and a header too large is 431, not a generic
 * 400. Each leaves no record.
 */
class CallerTermsIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            "/v1/payments",
            """
            {"accountId":"acc_1","amount":"-5.00","currency":"EUR","merchantReference":"r"}""",
            "VALIDATION_FAILED",
            "amount must be greater than zero"),
        Arguments.of(
            "/v1/payments",
            """
            {"accountId":"acc_1","amount":"10.001","currency":"EUR","merchantReference":"r"}""",
            "VALIDATION_FAILED",
            "amount has 3 decimals; EUR allows 2"),
        Arguments.of(
            "/v1/payments",
            """
            {"accountId":"acc_1","amount":"10.5","currency":"JPY","merchantReference":"r"}""",
            "VALIDATION_FAILED",
            "amount has 1 decimal; JPY allows none"),
        Arguments.of(
            "/v1/payments",
            """
            {"accountId":"acc_1","amount":"10.00","currency":"XXX1","merchantReference":"r"}""",
            "VALIDATION_FAILED",
            "currency is not an ISO 4217 currency code"),
        Arguments.of(
            "/v1/orders",
            """
            {"currency":"EUR","items":[{"sku":"a","quantity":1,"unitPrice":"1.00"},
             {"sku":"b","quantity":1,"unitPrice":"1.234"}]}""",
            "VALIDATION_FAILED",
            "items[1].unitPrice has 3 decimals; EUR allows 2"),
        Arguments.of(
            "/v1/payments",
            """
            {"accountId":"acc_1","amount":"10.00","currency":"EUR","merchantReference":"r",
             "colour":"red"}""",
            "UNKNOWN_FIELD",
            "\"colour\". Remove it; the fields here are accountId, amount, channel, currency,"
                + " merchantReference."),
        Arguments.of(
            "/v1/orders",
            """
            {"currency":"EUR","items":[{"sku":"a","quantity":1,"unitPrice":"1.00","size":"L"}]}""",
            "UNKNOWN_FIELD",
            "\"size\" in items[0]. Remove it; the fields here are quantity, sku, unitPrice."),
        Arguments.of(
            "/v1/orders",
            """
            {"currency":"EUR","items":[{"sku":"a","quantity":"many","unitPrice":"1.00"}]}""",
            "WRONG_TYPE",
            "items[0].quantity must be a number."));
  }

  @ParameterizedTest(name = "{0} {3}")
  @MethodSource("refusals")
  void aRefusalNamesTheJsonFieldAndTheRule(
      String path, String body, String errorCode, String expected) {
    String key = newKey();
    HttpResponse<String> response = post(path, TENANT_A, key, body);

    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    JsonNode problem = JSON.readTree(response.body());
    assertThat(problem.get("errorCode").asString()).isEqualTo(errorCode);
    String detail = problem.get("detail").asString();
    assertThat(detail).contains(expected);
    assertThat(detail)
        .doesNotContain("Valid", "dev.idemkit", "java.", "Request[", "CreateOrder", "Item")
        .doesNotContainIgnoringCase("jackson")
        .endsWith(".");
    assertThat(recordsFor(key)).isZero();
  }

  @Test
  void aTenThousandCharacterKeyIs431WithAProblemBody() {
    String key = "k".repeat(10_000);
    HttpResponse<String> response =
        post("/v1/payments", TENANT_A, key, payment("header-too-large", "10.00"));

    assertThat(response.statusCode()).isEqualTo(431);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    JsonNode problem = JSON.readTree(response.body());
    assertThat(problem.get("status").asInt()).isEqualTo(431);
    assertThat(problem.get("errorCode").asString()).isEqualTo("REQUEST_HEADER_TOO_LARGE");
    assertThat(problem.get("detail").asString()).contains("at most 255 characters");
    assertThat(paymentsFor("header-too-large")).isZero();
  }
}
