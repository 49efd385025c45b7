package dev.idemkit.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The hand-written JSON reader: top-level string fields of problem bodies (never a crash), and
 * whole documents for the conformance checker's effect counts.
 */
class JsonTest {

  private static final String PROBLEM =
      "{\"detail\":\"This key was already used for a different request.\","
          + "\"errorCode\":\"IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST\",\"status\":422,"
          + "\"title\":\"Idempotency-Key reused\",\"type\":\"urn:problem-type:idemkit:x\"}";

  @Test
  void readsTheFieldsOfAProblem() {
    assertThat(Json.string(PROBLEM, "errorCode"))
        .hasValue("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(Json.string(PROBLEM, "detail"))
        .hasValue("This key was already used for a different request.");
    assertThat(Json.string(PROBLEM, "instance")).isEmpty();
  }

  @Test
  void unescapesStrings() {
    String json = "{\"detail\":\"say \\\"hi\\\" \\\\ caf\\u00e9\\n\\ttab \\/ ok\"}";
    assertThat(Json.string(json, "detail")).hasValue("say \"hi\" \\ café\n\ttab / ok");
  }

  @Test
  void skipsNestedValuesAndFindsOnlyTopLevelStrings() {
    String json =
        " { \"errors\" : [ {\"errorCode\":\"NESTED\"}, \"x]\" , 1 ], \"meta\": {\"a\":{\"b\":\"}\"}},"
            + " \"status\": 409, \"ok\": true, \"none\": null, \"errorCode\" : \"TOP\" } ";
    assertThat(Json.string(json, "errorCode")).hasValue("TOP");
    assertThat(Json.string(json, "status")).isEmpty();
    assertThat(Json.string(json, "meta")).isEmpty();
  }

  @Test
  void malformedOrAbsentTextYieldsNothing() {
    assertThat(Json.string(null, "errorCode")).isEmpty();
    assertThat(Json.string("", "errorCode")).isEmpty();
    assertThat(Json.string("<html>502 Bad Gateway</html>", "errorCode")).isEmpty();
    assertThat(Json.string("{\"errorCode\":\"UNTERMINATED", "errorCode")).isEmpty();
    assertThat(Json.string("{\"errorCode\":\"\\uZZZZ\"}", "errorCode")).isEmpty();
    assertThat(Json.string("[\"errorCode\"]", "errorCode")).isEmpty();
    assertThat(Json.string("{}", "errorCode")).isEmpty();
  }

  @Test
  void writesAnObjectOfStringFieldsThatReadsBack() {
    String json = Json.object(Map.of("operation", "refund \"42\"\n"));

    assertThat(json).isEqualTo("{\"operation\":\"refund \\\"42\\\"\\n\"}");
    assertThat(Json.parse(json)).isEqualTo(Map.of("operation", "refund \"42\"\n"));
    // In the map's order, empty values included.
    assertThat(Json.object(new TreeMap<>(Map.of("b", "", "a", "1"))))
        .isEqualTo("{\"a\":\"1\",\"b\":\"\"}");
    assertThat(Json.object(Map.of())).isEqualTo("{}");
  }

  @Test
  void quoteRoundTrips() {
    String value = "a \"quoted\" \\ value\nwith\u0001control";
    String json = "{\"v\":" + Json.quote(value) + "}";
    assertThat(Json.string(json, "v")).hasValue(value);
  }

  @Test
  void aFieldAfterTheOneAskedForIsNotRead() {
    assertThat(Json.string("{\"errorCode\":\"FIRST\",\"errorCode\":\"SECOND\"}", "errorCode"))
        .hasValue("FIRST");
    assertThat(Json.string("{\"errorCode\":\"X\",<html>", "errorCode")).hasValue("X");
    assertThat(Json.string("{\"a\":<html>,\"errorCode\":\"X\"}", "errorCode")).isEmpty();
  }

  @Test
  void hostileNestingAndHugeNumbersYieldNothingOrABigDecimal() {
    String deep = "{\"a\":" + "[".repeat(100_000) + "]".repeat(100_000) + ",\"errorCode\":\"X\"}";
    assertThat(Json.string(deep, "errorCode")).isEmpty();
    assertThatThrownBy(() -> Json.parse("[".repeat(Json.MAX_DEPTH + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nested deeper");
    assertThat(Json.parse("[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH))).isNotNull();
    assertThat(
            Json.string("{\"n\":123456789012345678901234567890,\"errorCode\":\"X\"}", "errorCode"))
        .hasValue("X");
    assertThat(Json.parse("123456789012345678901234567890"))
        .isEqualTo(new BigDecimal("123456789012345678901234567890"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void parsesAWholeDocument() {
    Object doc =
        Json.parse(
            " {\"count\":2,\"data\":[{\"n\":\"7\"},{}],\"x\":1.5,\"ok\":true,\"no\":false,"
                + "\"none\":null,\"s\":\"a\\u00e9\\n\"} ");

    assertThat((Map<String, Object>) doc)
        .containsExactly(
            entry("count", 2L),
            entry("data", List.of(Map.of("n", "7"), Map.of())),
            entry("x", new BigDecimal("1.5")),
            entry("ok", true),
            entry("no", false),
            entry("none", null),
            entry("s", "a\u00e9\n"));
    assertThat(Json.parse("[1,2,3]")).isEqualTo(List.of(1L, 2L, 3L));
  }

  @Test
  void aMalformedDocumentIsRefused() {
    for (String malformed :
        List.of(
            "", "{", "{\"a\":1", "{\"a\":1} x", "[1,]", "\"bad \\q escape\"", "\"\\u12", "tru")) {
      assertThatThrownBy(() -> Json.parse(malformed))
          .as(malformed)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
