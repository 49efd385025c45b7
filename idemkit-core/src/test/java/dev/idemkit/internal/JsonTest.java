package dev.idemkit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

  @Test
  void parsesEveryKindOfValue() {
    Object value =
        Json.parse(
            " {\"s\": \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\", \"n\": -1.50e+2,"
                + " \"i\": 0, \"t\": true, \"f\": false, \"z\": null, \"a\": [1, [], {}]}\r\n");

    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("s", "a\"b\\c/d\b\f\n\r\t\u00e9\ud83d\ude00");
    expected.put("n", new BigDecimal("-1.50e+2"));
    expected.put("i", BigDecimal.ZERO);
    expected.put("t", true);
    expected.put("f", false);
    expected.put("z", null);
    expected.put("a", Arrays.asList(BigDecimal.ONE, List.of(), Map.of()));
    assertThat(value).isEqualTo(expected);
    assertThat(new ArrayList<Object>(((Map<?, ?>) value).keySet()))
        .containsExactly("s", "n", "i", "t", "f", "z", "a");
  }

  @Test
  void keepsNumbersExactlyAsWritten() {
    assertThat(Json.parse("12345678901234567890.123456789"))
        .isEqualTo(new BigDecimal("12345678901234567890.123456789"));
    assertThat(Json.parse("1E400")).isEqualTo(new BigDecimal("1E400"));
  }

  @Test
  void parsesTopLevelScalars() {
    assertThat(Json.parse("\"x\"")).isEqualTo("x");
    assertThat(Json.parse("null")).isNull();
    assertThat(Json.parse(" true ")).isEqualTo(true);
  }

  @Test
  void passesLoneSurrogatesThrough() {
    assertThat(Json.parse("\"\\ud800x\"")).isEqualTo("\ud800x");
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        "``                          | 0 | expected a JSON value",
        "`   `                       | 3 | expected a JSON value",
        "{                           | 1 | expected a string key",
        "{\"a\" 1}                   | 5 | expected ':'",
        "{\"a\":1,}                  | 7 | expected a string key",
        "{\"a\":1 \"b\":2}           | 7 | expected ',' or '}'",
        "{a:1}                       | 1 | expected a string key",
        "[1,]                        | 3 | expected a JSON value",
        "[1 2]                       | 3 | expected ',' or ']'",
        "[                           | 1 | expected a JSON value",
        "{\"a\":1,\"a\":2}           | 7 | duplicate key \"a\"",
        "{\"a\":1} x                 | 8 | unexpected content after the JSON value",
        "1 2                         | 2 | unexpected content after the JSON value",
        "'a'                         | 0 | unexpected character '''",
        "\"abc                       | 4 | unterminated string",
        "\"a\\x\"                    | 2 | invalid escape sequence \\x",
        "\"a\\u12\"                  | 2 | expected four hex digits",
        "\"a\\u12g4\"                | 2 | expected four hex digits",
        "01                          | 1 | leading zeros",
        "-                           | 1 | expected a digit",
        "+1                          | 0 | unexpected character '+'",
        ".5                          | 0 | unexpected character '.'",
        "1.                          | 2 | expected a digit after the decimal point",
        "1e                          | 2 | expected a digit in the exponent",
        "1e+                         | 3 | expected a digit in the exponent",
        "NaN                         | 0 | unexpected character 'N'",
        "tru                         | 0 | expected true",
        "nul                         | 0 | expected null",
        "1e99999999999               | 0 | number out of range",
      })
  void reportsErrorsWithTheirPosition(String json, int position, String message) {
    assertThatThrownBy(() -> Json.parse(json))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageMatching("invalid JSON at position " + position + "[: ].*")
        .hasMessageContaining(message);
  }

  @Test
  void rejectsRawControlCharactersInStrings() {
    assertThatThrownBy(() -> Json.parse("\"a\nb\""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid JSON at position 2:")
        .hasMessageContaining("unescaped control character U+000A");
  }

  @Test
  void rejectsNonJsonWhitespace() {
    assertThatThrownBy(() -> Json.parse("\u00a01"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid JSON at position 0:");
  }

  @Test
  void rejectsExcessiveNesting() {
    String deep = "[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1);

    assertThatThrownBy(() -> Json.parse(deep))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nesting deeper than");
    assertThat(Json.parse("[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH))).isNotNull();
  }

  @Test
  void writesAndReadsStringMaps() {
    Map<String, String> map = new LinkedHashMap<>();
    map.put("b", "2");
    map.put("a", "line\nbreak \"quoted\" \u20ac");

    String json = Json.write(map);

    assertThat(json).isEqualTo("{\"a\":\"line\\nbreak \\\"quoted\\\" \u20ac\",\"b\":\"2\"}");
    assertThat(Json.readStringMap(json)).isEqualTo(map).containsOnlyKeys("a", "b");
    assertThat(Json.readStringMap("{}")).isEmpty();
  }

  @Test
  void refusesToWriteNullValues() {
    Map<String, String> map = new LinkedHashMap<>();
    map.put("a", null);

    assertThatThrownBy(() -> Json.write(map))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"a\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[]", "\"a\"", "null", "{\"a\":1}", "{\"a\":null}", "{\"a\":[\"x\"]}"})
  void readStringMapRejectsAnythingButAnObjectOfStrings(String json) {
    assertThatThrownBy(() -> Json.readStringMap(json)).isInstanceOf(IllegalArgumentException.class);
  }
}
