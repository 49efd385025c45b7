package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The one accepted spelling of a path, and its decoded form. */
class RequestPathsTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "/|/",
        "/v1/payments|/v1/payments",
        "/v1/admin/idempotency/recovery|/v1/admin/idempotency/recovery",
        "/v1/admin/idempotency/records/t/create_payment/a%20b|/v1/admin/idempotency/records/t/create_payment/a b",
        "/v1/x/%C3%A9|/v1/x/é",
        "/v1/x/a:b@c!$&'()*+,=|/v1/x/a:b@c!$&'()*+,=",
        "/v1/x/%22q%22|/v1/x/\"q\""
      })
  void acceptsThePlainSpellingAndDecodesIt(String raw, String decoded) {
    assertThat(RequestPaths.canonical(raw)).hasValue(decoded);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "v1/payments",
        "/v1;x/admin",
        "/v1/admin;",
        "/v1/%61dmin",
        "/v1/%2e%2e/admin",
        "/v1/%2Fadmin",
        "/v1/%5Cadmin",
        "/v1/%3Badmin",
        "/v1/%25admin",
        "/v1/%00",
        "/v1/%7F",
        "/v1/%",
        "/v1/%4",
        "/v1/%zz",
        "/v1/%c0%ae",
        "/v1/%C2%85",
        "/v1/%C0%80",
        "/v1/../admin",
        "/v1/./admin",
        "/v1/..",
        "//v1/admin",
        "/v1//admin",
        "/v1/admin/",
        "/v1\\admin",
        "/v1/a b",
        "/v1/é",
        "/v1/a\"b",
        "/v1/x?y"
      })
  void refusesEveryOtherSpelling(String raw) {
    assertThat(RequestPaths.canonical(raw)).isEmpty();
  }
}
