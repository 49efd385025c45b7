package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The payload check accepts every kind of JSON value and nothing outside RFC 8259. */
class JsonSyntaxTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{}",
        "[]",
        "0",
        "-0",
        "-12.5E-3",
        "1e10",
        "true",
        "false",
        "null",
        "\"\"",
        " \n\t{\"a\" : [ 1 , {\"b\":null} ] }\r\n",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\"",
        "{\"caf\u00e9\":\"\ud83d\ude00\"}"
      })
  void acceptsOneJsonValue(String text) {
    assertThatCode(() -> JsonSyntax.requireValue(text, "payload")).doesNotThrowAnyException();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        " ",
        "not json {",
        "{",
        "}",
        "[1,]",
        "{\"a\":1,}",
        "{a:1}",
        "{'a':1}",
        "{\"a\" 1}",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "tru",
        "nul",
        "True",
        "NaN",
        "\"open",
        "\"\\x\"",
        "\"\\u12g4\"",
        "\"tab\there\"",
        "{} {}",
        "1 2",
        "[1] x",
        "// c\n{}",
        "\u00a0{}"
      })
  void refusesAnythingElseNamingThePayloadAndPosition(String text) {
    assertThatThrownBy(() -> JsonSyntax.requireValue(text, "payload"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("payload is not one well-formed JSON value: ")
        .hasMessageContaining(" at character ");
  }

  @Test
  void refusesNestingDeeperThanTheLimitWithoutExhaustingTheStack() {
    String ok = "[".repeat(JsonSyntax.MAX_DEPTH) + "]".repeat(JsonSyntax.MAX_DEPTH);
    assertThatCode(() -> JsonSyntax.requireValue(ok, "payload")).doesNotThrowAnyException();
    String deep = "[".repeat(100_000) + "]".repeat(100_000);
    assertThatThrownBy(() -> JsonSyntax.requireValue(deep, "payload"))
        .hasMessageContaining("nested deeper than " + JsonSyntax.MAX_DEPTH);
  }
}
