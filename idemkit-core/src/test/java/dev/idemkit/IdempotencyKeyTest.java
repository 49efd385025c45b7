package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IdempotencyKeyTest {

  @Test
  void acceptsVisibleAscii() {
    StringBuilder allVisible = new StringBuilder();
    for (char c = 0x21; c <= 0x7E; c++) {
      allVisible.append(c);
    }

    assertThat(IdempotencyKey.of("abc-123").value()).isEqualTo("abc-123");
    assertThat(IdempotencyKey.of(allVisible.toString()).value()).hasSize(94);
    assertThat(IdempotencyKey.of("k".repeat(255)).value()).hasSize(255);
    assertThat(new IdempotencyKey("x")).isEqualTo(IdempotencyKey.of("x"));
  }

  @Test
  void toStringIsTheValue() {
    assertThat(IdempotencyKey.of("abc-123")).hasToString("abc-123");
  }

  @Test
  void rejectsNull() {
    assertThatThrownBy(() -> IdempotencyKey.of(null))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("idempotency key is missing (null)");
  }

  @Test
  void rejectsEmpty() {
    assertThatThrownBy(() -> IdempotencyKey.of(""))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("idempotency key is empty");
  }

  @Test
  void rejectsMoreThan255Characters() {
    assertThatThrownBy(() -> IdempotencyKey.of("k".repeat(256)))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("idempotency key is too long: 256 characters, at most 255 are allowed");
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @CsvSource({
    "'a b', U+0020 (space), 2",
    "'a\tb', U+0009 (control character), 2",
    "'\u0001', U+0001 (control character), 1",
    "'ab\u007f', U+007F (control character), 3",
    "'caf\u00e9', U+00E9 (non-ASCII character), 4",
    "'\ud83d\ude00', U+1F600 (non-ASCII character), 1",
  })
  void rejectsCharactersOutsideVisibleAscii(String key, String codePoint, int position) {
    assertThatThrownBy(() -> IdempotencyKey.of(key))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage(
            "idempotency key has a disallowed character at position "
                + position
                + ": "
                + codePoint
                + "; only visible ASCII characters (0x21-0x7E) are allowed");
  }

  @Test
  void namesAHeadersNonAsciiByteAsAByte() {
    // "café" sent as UTF-8 and read by the container one character per byte: "cafÃ©".
    String asReceived =
        new String("caf\u00e9".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    assertThatThrownBy(() -> IdempotencyKey.fromHeader(asReceived))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage(
            "Idempotency-Key header has a non-ASCII byte 0xC3 at position 4; a key is visible"
                + " ASCII characters (0x21-0x7E) only");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"" + asReceived + "\""))
        .hasMessageStartingWith("Idempotency-Key header has a non-ASCII byte 0xC3 at position 4;");
    // A header value decoded beyond one byte per character still names the code point.
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("caf\u0153"))
        .hasMessageContaining("position 4: U+0153 (non-ASCII character)");
  }

  @Test
  void exceptionCarriesAStableErrorCode() {
    assertThatThrownBy(() -> IdempotencyKey.of(""))
        .isInstanceOfSatisfying(
            InvalidIdempotencyKeyException.class,
            e -> assertThat(e.errorCode()).isEqualTo("IDEMPOTENCY_KEY_INVALID"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void readsHeaderValues() {
    String uuid = UUID.randomUUID().toString();
    String longKey = "k".repeat(255);

    assertThat(IdempotencyKey.fromHeader("abc-123")).isEqualTo(IdempotencyKey.of("abc-123"));
    assertThat(IdempotencyKey.fromHeader("\"abc-123\"")).isEqualTo(IdempotencyKey.of("abc-123"));
    assertThat(IdempotencyKey.fromHeader(longKey).value()).isEqualTo(longKey);
    assertThat(IdempotencyKey.fromHeader("\"" + longKey + "\"").value()).isEqualTo(longKey);
    assertThat(IdempotencyKey.fromHeader(uuid).value()).isEqualTo(uuid);
    assertThat(IdempotencyKey.fromHeader("\"" + uuid + "\"").value()).isEqualTo(uuid);
    assertThat(IdempotencyKey.fromHeader("  \"x\"  ").value()).isEqualTo("x");
    assertThat(IdempotencyKey.fromHeader("\t x \t").value()).isEqualTo("x");
  }

  @Test
  void unescapesQuotedStrings() {
    assertThat(IdempotencyKey.fromHeader("\"a\\\"b\\\\c\"").value()).isEqualTo("a\"b\\c");
    assertThat(IdempotencyKey.fromHeader("\"a,b;c\"").value()).isEqualTo("a,b;c");
  }

  @ParameterizedTest(name = "[{index}] <{0}>")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        "``             | Idempotency-Key header is empty",
        "`  \t `        | Idempotency-Key header is empty",
        "\"\"           | idempotency key is empty",
        "\"abc          | Idempotency-Key header has an unterminated quoted string",
        "\"abc\\\"      | Idempotency-Key header has an unterminated quoted string",
        "abc\"          | Idempotency-Key header has an unbalanced '\"' at position 4",
        "a\"b\"         | Idempotency-Key header has an unbalanced '\"' at position 2",
        "\"a\"b         | Idempotency-Key header has unexpected characters after the closing"
            + " quote, at position 4",
        "\"a\\nb\"      | Idempotency-Key header has an invalid escape at position 3",
        "a,b            | Idempotency-Key header has several values (a ',' at position 2)",
        "`a, b`         | Idempotency-Key header has several values (a ',' at position 2)",
        "`\"a\", \"b\"` | Idempotency-Key header has several values (a ',' at position 4)",
        "`\"a\",`       | Idempotency-Key header has several values",
        "a;p=1          | Idempotency-Key header has parameters (a ';' at position 2)",
        "`\"a\";p=1`    | Idempotency-Key header has parameters (a ';' at position 4)",
        "`a b`          | Idempotency-Key header has whitespace inside the key at position 2",
        "`a\tb`         | Idempotency-Key header has whitespace inside the key at position 2",
        "`\"a b\"`      | idempotency key has a disallowed character at position 2: U+0020 (space)",
        "caf\u00e9      | Idempotency-Key header has a non-ASCII byte 0xE9 at position 4",
        "`\u0001`       | idempotency key has a disallowed character at position 1: U+0001",
      })
  void rejectsMalformedHeaders(String header, String message) {
    assertThatThrownBy(() -> IdempotencyKey.fromHeader(header))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessageStartingWith(message);
  }

  @Test
  void rejectsAnOverlongHeaderKey() {
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"" + "k".repeat(256) + "\""))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessageStartingWith("idempotency key is too long: 256 characters");
  }

  @Test
  void rejectsAMissingHeader() {
    assertThatThrownBy(() -> IdempotencyKey.fromHeader(null))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("Idempotency-Key header is missing");
  }
}
