package dev.idemkit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CanonicalJsonTest {

  /** RFC 8785 §3.2.2 and §3.2.4; JSON numbers are IEEE 754 doubles there. */
  @Test
  void rfc8785MainExample() {
    String input =
        "{\n"
            + "  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3,"
            + " 0.000000000000000000000000001],\n"
            + "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
            + "  \"literals\": [null, true, false]\n"
            + "}";

    Object value = numbersAsDoubles(Json.parse(input));

    assertThat(CanonicalJson.canonicalize(value))
        .isEqualTo(
            "{\"literals\":[null,true,false],"
                + "\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
                + "\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
    assertThat(CanonicalJson.canonicalBytes(value))
        .isEqualTo(
            bytes(
                "7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61 6c",
                "73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a 5b 33 33 33 33 33 33 33 33 33 2e 33",
                "33 33 33 33 33 33 2c 31 65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d",
                "32 37 5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e",
                "41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d"));
  }

  /** RFC 8785 §3.2.3: keys sort by their UTF-16 code units. */
  @Test
  void rfc8785SortingExample() {
    Map<String, Object> input = new LinkedHashMap<>();
    input.put("\u20ac", "Euro Sign");
    input.put("\r", "Carriage Return");
    input.put("\ufb33", "Hebrew Letter Dalet With Dagesh");
    input.put("1", "One");
    input.put("\ud83d\ude00", "Emoji: Grinning Face");
    input.put("\u0080", "Control");
    input.put("\u00f6", "Latin Small Letter O With Diaeresis");

    assertThat(CanonicalJson.canonicalize(input))
        .isEqualTo(
            "{\"\\r\":\"Carriage Return\","
                + "\"1\":\"One\","
                + "\"\u0080\":\"Control\","
                + "\"\u00f6\":\"Latin Small Letter O With Diaeresis\","
                + "\"\u20ac\":\"Euro Sign\","
                + "\"\ud83d\ude00\":\"Emoji: Grinning Face\","
                + "\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}");
  }

  /** RFC 8785 Appendix B. */
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "0000000000000000, 0",
    "8000000000000000, 0",
    "0000000000000001, 5e-324",
    "8000000000000001, -5e-324",
    "7fefffffffffffff, 1.7976931348623157e+308",
    "ffefffffffffffff, -1.7976931348623157e+308",
    "4340000000000000, 9007199254740992",
    "c340000000000000, -9007199254740992",
    "4430000000000000, 295147905179352830000",
    "44b52d02c7e14af5, 9.999999999999997e+22",
    "44b52d02c7e14af6, 1e+23",
    "44b52d02c7e14af7, 1.0000000000000001e+23",
    "444b1ae4d6e2ef4e, 999999999999999700000",
    "444b1ae4d6e2ef4f, 999999999999999900000",
    "444b1ae4d6e2ef50, 1e+21",
    "3eb0c6f7a0b5ed8c, 9.999999999999997e-7",
    "3eb0c6f7a0b5ed8d, 0.000001",
    "41b3de4355555553, 333333333.3333332",
    "41b3de4355555554, 333333333.33333325",
    "41b3de4355555555, 333333333.3333333",
    "41b3de4355555556, 333333333.3333334",
    "41b3de4355555557, 333333333.33333343",
    "becbf647612f3696, -0.0000033333333333333333",
    "43143ff3c1cb0959, 1424953923781206.2",
  })
  void rfc8785NumberTable(String ieeeHex, String expected) {
    double d = Double.longBitsToDouble(Long.parseUnsignedLong(ieeeHex, 16));

    assertThat(CanonicalJson.canonicalize(d)).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"7fffffffffffffff", "7ff0000000000000", "fff0000000000000"})
  void rejectsNanAndInfinity(String ieeeHex) {
    double d = Double.longBitsToDouble(Long.parseUnsignedLong(ieeeHex, 16));

    assertThatThrownBy(() -> CanonicalJson.canonicalize(d))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NaN and Infinity");
  }

  @Test
  void printsTheShortestRoundTrippingDigits() {
    assertThat(CanonicalJson.canonicalize(2.0E-3)).isEqualTo("0.002");
    assertThat(CanonicalJson.canonicalize(1.0E-7)).isEqualTo("1e-7");
    assertThat(CanonicalJson.canonicalize(1.5E-7)).isEqualTo("1.5e-7");
    assertThat(CanonicalJson.canonicalize(123e18)).isEqualTo("123000000000000000000");
    assertThat(CanonicalJson.canonicalize(123e19)).isEqualTo("1.23e+21");
    assertThat(CanonicalJson.canonicalize(1.5e30)).isEqualTo("1.5e+30");
    assertThat(CanonicalJson.canonicalize(-12.5)).isEqualTo("-12.5");
    // JDK 17's Double.toString gives "1.9999999999999998E23" and "9.999999999999999E22" here.
    assertThat(CanonicalJson.canonicalize(2e23)).isEqualTo("2e+23");
    assertThat(CanonicalJson.canonicalize(1e23)).isEqualTo("1e+23");
    assertThat(CanonicalJson.canonicalize(8.41e21)).isEqualTo("8.41e+21");
  }

  @Test
  void everyPrintedDoubleParsesBackAndIsNoLongerThanJavasOwnDigits() {
    SplittableRandom random = new SplittableRandom(8785);
    for (int i = 0; i < 20_000; i++) {
      double d = Double.longBitsToDouble(random.nextLong());
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        continue;
      }
      String text = CanonicalJson.canonicalize(d);
      assertThat(Double.parseDouble(text)).as(text).isEqualTo(d == 0 ? 0.0 : d);
      assertThat(significantDigits(text))
          .as(text)
          .isLessThanOrEqualTo(significantDigits(Double.toString(d)));
    }
  }

  @Test
  void floatsAreWidenedExactly() {
    assertThat(CanonicalJson.canonicalize(0.5f)).isEqualTo("0.5");
    assertThat(CanonicalJson.canonicalize(0.1f)).isEqualTo("0.10000000149011612");
    assertThat(CanonicalJson.canonicalize(-0.0f)).isEqualTo("0");
  }

  @Test
  void integersPrintPlainly() {
    assertThat(CanonicalJson.canonicalize(Integer.MIN_VALUE)).isEqualTo("-2147483648");
    assertThat(CanonicalJson.canonicalize((short) 7)).isEqualTo("7");
    assertThat(CanonicalJson.canonicalize((byte) -8)).isEqualTo("-8");
    assertThat(CanonicalJson.canonicalize(9007199254740993L - 1)).isEqualTo("9007199254740992");
    assertThat(CanonicalJson.canonicalize(BigInteger.TEN.pow(21))).isEqualTo("1e+21");
    assertThat(CanonicalJson.canonicalize(new BigDecimal("-1.5E-7"))).isEqualTo("-1.5e-7");
  }

  @Test
  void decimalsWithDifferentScalesCanonicalizeAlike() {
    assertThat(CanonicalJson.canonicalize(new BigDecimal("10.00")))
        .isEqualTo(CanonicalJson.canonicalize(new BigDecimal("10")))
        .isEqualTo(CanonicalJson.canonicalize(new BigDecimal("1E+1")))
        .isEqualTo(CanonicalJson.canonicalize(10L))
        .isEqualTo(CanonicalJson.canonicalize(10.0))
        .isEqualTo("10");
    assertThat(CanonicalJson.canonicalize(new BigDecimal("0.10"))).isEqualTo("0.1");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "12345678901234567890",
        "9007199254740993",
        "0.1000000000000000000001",
        "1E+400",
        "1E-400",
        "1152921504606846976"
      })
  void rejectsDecimalsThatADoubleCannotCarry(String value) {
    assertThatThrownBy(() -> CanonicalJson.canonicalize(new BigDecimal(value)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pass the value as a string");
  }

  @Test
  void rejectsLongsAndBigIntegersThatADoubleCannotCarry() {
    assertThatThrownBy(() -> CanonicalJson.canonicalize(Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Long")
        .hasMessageContaining("pass the value as a string");
    assertThatThrownBy(() -> CanonicalJson.canonicalize(new BigInteger("12345678901234567890")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BigInteger")
        .hasMessageContaining("pass the value as a string");
  }

  @Test
  void escapesOnlyQuoteBackslashAndControlCharacters() {
    String all = "\"\\/\b\f\n\r\t\u0000\u001f\u007f\u00e9\u2028<>&'";

    assertThat(CanonicalJson.canonicalize(all))
        .isEqualTo("\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u00e9\u2028<>&'\"");
  }

  @Test
  void writesNestedStructures() {
    Map<String, Object> inner = new HashMap<>();
    inner.put("z", null);
    inner.put("a", List.of());
    Map<String, Object> outer = new TreeMap<>();
    outer.put("list", Arrays.asList(1, "two", null, true, Map.of(), inner));
    outer.put("empty", Map.of());
    outer.put("text", new StringBuilder("x"));

    assertThat(CanonicalJson.canonicalize(outer))
        .isEqualTo(
            "{\"empty\":{},"
                + "\"list\":[1,\"two\",null,true,{},{\"a\":[],\"z\":null}],"
                + "\"text\":\"x\"}");
  }

  @Test
  void encodesUtf8() {
    assertThat(CanonicalJson.canonicalBytes("\u20ac\ud83d\ude00"))
        .isEqualTo("\"\u20ac\ud83d\ude00\"".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void rejectsUnpairedSurrogates() {
    assertThatThrownBy(() -> CanonicalJson.canonicalize("a\ud83d"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate U+D83D at index 1");
    assertThatThrownBy(() -> CanonicalJson.canonicalize(Map.of("\ude00", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate");
  }

  @Test
  void rejectsNonStringKeys() {
    Map<Object, Object> numericKey = Map.of(1, "one");
    Map<Object, Object> nullKey = new HashMap<>();
    nullKey.put(null, "x");

    assertThatThrownBy(() -> CanonicalJson.canonicalize(numericKey))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Integer");
    assertThatThrownBy(() -> CanonicalJson.canonicalize(nullKey))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null key");
  }

  @Test
  void rejectsUnsupportedTypesByName() {
    assertThatThrownBy(() -> CanonicalJson.canonicalize(new Object[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Object[]");
    assertThatThrownBy(() -> CanonicalJson.canonicalize(List.of(java.time.Instant.EPOCH)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.time.Instant");
    assertThatThrownBy(
            () -> CanonicalJson.canonicalize(new java.util.concurrent.atomic.AtomicLong(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.util.concurrent.atomic.AtomicLong");
  }

  @Test
  void rejectsCycles() {
    List<Object> list = new ArrayList<>();
    list.add(list);

    assertThatThrownBy(() -> CanonicalJson.canonicalize(list))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cycle");
  }

  @Test
  void acceptsTheSameListTwiceWhenItIsNotACycle() {
    List<Object> shared = List.of(1);

    assertThat(CanonicalJson.canonicalize(Map.of("a", shared, "b", shared)))
        .isEqualTo("{\"a\":[1],\"b\":[1]}");
  }

  @Test
  void rejectsExcessiveNesting() {
    Object value = "leaf";
    for (int i = 0; i <= CanonicalJson.MAX_DEPTH; i++) {
      value = List.of(value);
    }
    Object tooDeep = value;

    assertThatThrownBy(() -> CanonicalJson.canonicalize(tooDeep))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nested deeper");
  }

  private static byte[] bytes(String... spacedHexLines) {
    return HexFormat.of().parseHex(String.join("", spacedHexLines).replace(" ", ""));
  }

  private static int significantDigits(String number) {
    String mantissa = number.toLowerCase().split("e")[0].replace("-", "").replace(".", "");
    return mantissa.replaceAll("^0+", "").replaceAll("0+$", "").length();
  }

  private static Object numbersAsDoubles(Object value) {
    if (value instanceof BigDecimal d) {
      return d.doubleValue();
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>();
      list.forEach(element -> copy.add(numbersAsDoubles(element)));
      return copy;
    }
    if (value instanceof Map<?, ?> map) {
      Map<Object, Object> copy = new LinkedHashMap<>();
      map.forEach((k, v) -> copy.put(k, numbersAsDoubles(v)));
      return copy;
    }
    return value;
  }
}
