package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The hand-written reader of problem bodies: top-level string fields only, never a crash. */
class JsonFieldsTest {

  private static final String PROBLEM =
      "{\"detail\":\"This key was already used for a different request.\","
          + "\"errorCode\":\"IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST\",\"status\":422,"
          + "\"title\":\"Idempotency-Key reused\",\"type\":\"urn:problem-type:idemkit:x\"}";

  @Test
  void readsTheFieldsOfAProblem() {
    assertThat(JsonFields.string(PROBLEM, "errorCode"))
        .hasValue("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(JsonFields.string(PROBLEM, "detail"))
        .hasValue("This key was already used for a different request.");
    assertThat(JsonFields.string(PROBLEM, "instance")).isEmpty();
  }

  @Test
  void unescapesStrings() {
    String json = "{\"detail\":\"say \\\"hi\\\" \\\\ caf\\u00e9\\n\\ttab \\/ ok\"}";
    assertThat(JsonFields.string(json, "detail")).hasValue("say \"hi\" \\ café\n\ttab / ok");
  }

  @Test
  void skipsNestedValuesAndFindsOnlyTopLevelStrings() {
    String json =
        " { \"errors\" : [ {\"errorCode\":\"NESTED\"}, \"x]\" , 1 ], \"meta\": {\"a\":{\"b\":\"}\"}},"
            + " \"status\": 409, \"ok\": true, \"none\": null, \"errorCode\" : \"TOP\" } ";
    assertThat(JsonFields.string(json, "errorCode")).hasValue("TOP");
    assertThat(JsonFields.string(json, "status")).isEmpty();
    assertThat(JsonFields.string(json, "meta")).isEmpty();
  }

  @Test
  void malformedOrAbsentTextYieldsNothing() {
    assertThat(JsonFields.string(null, "errorCode")).isEmpty();
    assertThat(JsonFields.string("", "errorCode")).isEmpty();
    assertThat(JsonFields.string("<html>502 Bad Gateway</html>", "errorCode")).isEmpty();
    assertThat(JsonFields.string("{\"errorCode\":\"UNTERMINATED", "errorCode")).isEmpty();
    assertThat(JsonFields.string("{\"errorCode\":\"\\uZZZZ\"}", "errorCode")).isEmpty();
    assertThat(JsonFields.string("[\"errorCode\"]", "errorCode")).isEmpty();
    assertThat(JsonFields.string("{}", "errorCode")).isEmpty();
  }

  @Test
  void quoteRoundTrips() {
    String value = "a \"quoted\" \\ value\nwith\u0001control";
    String json = "{\"v\":" + JsonFields.quote(value) + "}";
    assertThat(JsonFields.string(json, "v")).hasValue(value);
  }
}
