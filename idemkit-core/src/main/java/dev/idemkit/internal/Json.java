package dev.idemkit.internal;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A small, strict RFC 8259 JSON parser, plus helpers to persist flat string maps.
 *
 * <p>{@link #parse(String)} maps objects to {@link LinkedHashMap} (in document order), arrays to
 * {@link ArrayList}, strings to {@link String}, numbers to {@link BigDecimal} (exactly as written),
 * {@code true}/{@code false} to {@link Boolean} and {@code null} to Java {@code null}. It accepts
 * nothing outside RFC 8259: no comments, no trailing commas, no single quotes, no leading zeros, no
 * trailing content after the value. Duplicate object keys are rejected because their meaning is not
 * defined. Escaped unpaired surrogates are passed through as they are. Nesting deeper than {@value
 * #MAX_DEPTH} levels is rejected.
 *
 * <p>Every syntax error is an {@link IllegalArgumentException} whose message names the 0-based
 * character position.
 *
 * <p>Internal to Idemkit, not API: it may change in any release.
 */
public final class Json {

  /** Deepest nesting of objects and arrays that {@link #parse(String)} accepts. */
  public static final int MAX_DEPTH = 1000;

  private Json() {}

  /**
   * Parses one JSON text.
   *
   * @param json the JSON text
   * @return the value, built from the types listed in the class description
   * @throws IllegalArgumentException if {@code json} is not valid JSON or has duplicate keys
   */
  public static Object parse(String json) {
    Objects.requireNonNull(json, "json");
    Parser parser = new Parser(json);
    parser.skipWhitespace();
    Object value = parser.value(0);
    parser.skipWhitespace();
    if (parser.pos < json.length()) {
      throw parser.error("unexpected content after the JSON value");
    }
    return value;
  }

  /**
   * Writes a map of strings as a canonical JSON object (keys sorted, see {@link CanonicalJson}).
   *
   * @param flat the map to write; neither keys nor values may be {@code null}
   * @return the JSON text, readable by {@link #readStringMap(String)}
   * @throws IllegalArgumentException if a key or value is {@code null}
   */
  public static String write(Map<String, String> flat) {
    Objects.requireNonNull(flat, "flat");
    for (Map.Entry<String, String> entry : flat.entrySet()) {
      if (entry.getValue() == null) {
        throw new IllegalArgumentException(
            "value of key \"" + entry.getKey() + "\" is null; only strings can be written");
      }
    }
    return CanonicalJson.canonicalize(flat);
  }

  /**
   * Reads a JSON object whose values are all strings.
   *
   * @param json a JSON object such as {@code {"a":"1","b":"2"}}
   * @return a new mutable map in document order
   * @throws IllegalArgumentException if {@code json} is not valid JSON, not an object, or has a
   *     value that is not a string
   */
  public static Map<String, String> readStringMap(String json) {
    Object value = parse(json);
    if (!(value instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException(
          "expected a JSON object of strings, got " + describe(value));
    }
    Map<String, String> result = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (!(entry.getValue() instanceof String s)) {
        throw new IllegalArgumentException(
            "value of key \""
                + entry.getKey()
                + "\" is "
                + describe(entry.getValue())
                + ", expected a string");
      }
      result.put((String) entry.getKey(), s);
    }
    return result;
  }

  private static String describe(Object value) {
    if (value == null) {
      return "null";
    } else if (value instanceof Map) {
      return "an object";
    } else if (value instanceof List) {
      return "an array";
    } else if (value instanceof BigDecimal) {
      return "a number";
    } else if (value instanceof Boolean) {
      return "a boolean";
    }
    return "a string";
  }

  private static final class Parser {
    private final String text;
    private int pos;

    Parser(String text) {
      this.text = text;
    }

    Object value(int depth) {
      if (pos >= text.length()) {
        throw error("unexpected end of input, expected a JSON value");
      }
      char c = text.charAt(pos);
      return switch (c) {
        case '{' -> object(depth);
        case '[' -> array(depth);
        case '"' -> string();
        case 't' -> literal("true", Boolean.TRUE);
        case 'f' -> literal("false", Boolean.FALSE);
        case 'n' -> literal("null", null);
        default -> {
          if (c == '-' || (c >= '0' && c <= '9')) {
            yield number();
          }
          throw error("unexpected character " + show(c) + ", expected a JSON value");
        }
      };
    }

    private Map<String, Object> object(int depth) {
      checkDepth(depth);
      pos++;
      Map<String, Object> map = new LinkedHashMap<>();
      skipWhitespace();
      if (peek() == '}') {
        pos++;
        return map;
      }
      while (true) {
        skipWhitespace();
        if (peek() != '"') {
          throw error("expected a string key");
        }
        int keyPos = pos;
        String key = string();
        skipWhitespace();
        expect(':', "after an object key");
        skipWhitespace();
        Object value = value(depth + 1);
        if (map.containsKey(key)) {
          pos = keyPos;
          throw error("duplicate key \"" + key + "\"");
        }
        map.put(key, value);
        skipWhitespace();
        if (peek() == ',') {
          pos++;
        } else if (peek() == '}') {
          pos++;
          return map;
        } else {
          throw error("expected ',' or '}' in an object");
        }
      }
    }

    private List<Object> array(int depth) {
      checkDepth(depth);
      pos++;
      List<Object> list = new ArrayList<>();
      skipWhitespace();
      if (peek() == ']') {
        pos++;
        return list;
      }
      while (true) {
        skipWhitespace();
        list.add(value(depth + 1));
        skipWhitespace();
        if (peek() == ',') {
          pos++;
        } else if (peek() == ']') {
          pos++;
          return list;
        } else {
          throw error("expected ',' or ']' in an array");
        }
      }
    }

    private String string() {
      pos++;
      StringBuilder out = new StringBuilder();
      while (true) {
        if (pos >= text.length()) {
          throw error("unterminated string");
        }
        char c = text.charAt(pos);
        if (c == '"') {
          pos++;
          return out.toString();
        }
        if (c < 0x20) {
          throw error("unescaped control character " + show(c) + " in a string");
        }
        if (c != '\\') {
          out.append(c);
          pos++;
          continue;
        }
        if (pos + 1 >= text.length()) {
          throw error("unterminated escape sequence");
        }
        char escaped = text.charAt(pos + 1);
        switch (escaped) {
          case '"', '\\', '/' -> out.append(escaped);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            out.append(hex4(pos + 2));
            pos += 4;
          }
          default -> throw error("invalid escape sequence \\" + escaped);
        }
        pos += 2;
      }
    }

    private char hex4(int start) {
      if (start + 4 > text.length()) {
        throw error("incomplete \\u escape, expected four hex digits");
      }
      int value = 0;
      for (int i = start; i < start + 4; i++) {
        char c = text.charAt(i);
        int digit =
            c >= '0' && c <= '9'
                ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) {
          throw error("invalid \\u escape, expected four hex digits");
        }
        value = value * 16 + digit;
      }
      return (char) value;
    }

    private BigDecimal number() {
      int start = pos;
      if (peek() == '-') {
        pos++;
      }
      if (peek() == '0') {
        pos++;
        if (isDigit(peek())) {
          throw error("leading zeros are not allowed in numbers");
        }
      } else if (isDigit(peek())) {
        digits();
      } else {
        throw error("expected a digit");
      }
      if (peek() == '.') {
        pos++;
        if (!isDigit(peek())) {
          throw error("expected a digit after the decimal point");
        }
        digits();
      }
      if (peek() == 'e' || peek() == 'E') {
        pos++;
        if (peek() == '+' || peek() == '-') {
          pos++;
        }
        if (!isDigit(peek())) {
          throw error("expected a digit in the exponent");
        }
        digits();
      }
      try {
        return new BigDecimal(text.substring(start, pos));
      } catch (NumberFormatException e) {
        pos = start;
        throw error("number out of range");
      }
    }

    private void digits() {
      while (isDigit(peek())) {
        pos++;
      }
    }

    private Object literal(String word, Object value) {
      if (!text.startsWith(word, pos)) {
        throw error("invalid literal, expected " + word);
      }
      pos += word.length();
      return value;
    }

    private void checkDepth(int depth) {
      if (depth >= MAX_DEPTH) {
        throw error("nesting deeper than " + MAX_DEPTH + " levels");
      }
    }

    private void expect(char c, String where) {
      if (peek() != c) {
        throw error("expected '" + c + "' " + where);
      }
      pos++;
    }

    /** Returns the current character, or {@code 0xFFFF} at the end, which no rule accepts. */
    private char peek() {
      return pos < text.length() ? text.charAt(pos) : '\uFFFF';
    }

    void skipWhitespace() {
      while (pos < text.length()) {
        char c = text.charAt(pos);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
          return;
        }
        pos++;
      }
    }

    IllegalArgumentException error(String message) {
      String end = pos >= text.length() ? " (end of input)" : "";
      return new IllegalArgumentException("invalid JSON at position " + pos + end + ": " + message);
    }

    private static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }

    private static String show(char c) {
      return c >= 0x20 && c < 0x7F ? "'" + c + "'" : String.format(Locale.ROOT, "U+%04X", (int) c);
    }
  }
}
