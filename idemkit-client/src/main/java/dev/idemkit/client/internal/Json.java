package dev.idemkit.client.internal;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The client's one JSON codec, and the only place it reads or writes JSON: read one top-level
 * string field of a small object (the client reads {@code errorCode} and {@code detail} of an RFC
 * 9457 problem, {@code key} of an issued key), parse a document into maps, lists, strings, numbers
 * and booleans (the conformance checker counts effects in one), and write a string or a small
 * object of string fields (the key-issue request).
 *
 * <p><strong>Why not Jackson.</strong> The client goes into other people's applications, next to
 * whatever JSON library (and version of it) they chose; a dependency of ours would be one more to
 * converge with theirs. So its runtime class path is the JDK alone, which the module's build
 * enforces ({@code bannedDependencies} in its pom), and the little JSON it needs is written here,
 * once. Anything the client comes to read or write in JSON goes through this class.
 *
 * <p>Not API: public only so that idemkit-conformance, whose jar carries this class, can use it; it
 * may change in any release.
 */
public final class Json {

  /** Deeper nesting is refused, so a hostile answer cannot exhaust the stack. */
  static final int MAX_DEPTH = 512;

  private final String text;
  private int at;
  private int depth;

  private Json(String text) {
    this.text = text;
  }

  /**
   * The whole text as one JSON value: a {@link Map} (in field order), a {@link List}, a {@link
   * String}, a {@link Long} (a whole number that fits), a {@link BigDecimal} (any other number), a
   * {@link Boolean} or {@code null}.
   *
   * @throws IllegalArgumentException if the text is not one well-formed JSON value
   */
  public static Object parse(String text) {
    Json json = new Json(text);
    json.space();
    Object value = json.value();
    json.space();
    if (json.at != text.length()) {
      throw new IllegalArgumentException("trailing text at " + json.at);
    }
    return value;
  }

  /**
   * The value of the top-level string field {@code name}, unescaped; empty if the text is not a
   * JSON object, has no such field, or the field is not a string. Nested objects and arrays are
   * skipped, not searched; the first such field answers, and text after it is not read. Anything
   * malformed before it yields nothing rather than an exception, because this only ever decorates
   * an answer that is already there.
   */
  public static Optional<String> string(String json, String name) {
    if (json == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(new Json(json).find(name));
    } catch (IllegalArgumentException malformed) {
      return Optional.empty();
    }
  }

  /** A JSON object of string fields, in the map's order: {@code {"name":"value",...}}. */
  public static String object(Map<String, String> fields) {
    StringBuilder out = new StringBuilder("{");
    fields.forEach(
        (name, value) ->
            out.append(out.length() == 1 ? "" : ",")
                .append(quote(name))
                .append(':')
                .append(quote(value)));
    return out.append('}').toString();
  }

  /** Escapes a Java string as a JSON string literal, quotes included. */
  public static String quote(String value) {
    StringBuilder out = new StringBuilder(value.length() + 2).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  private String find(String name) {
    space();
    expect('{');
    space();
    if (peek() == '}') {
      return null;
    }
    while (true) {
      space();
      String field = string();
      space();
      expect(':');
      space();
      if (field.equals(name) && peek() == '"') {
        return string();
      }
      value();
      space();
      char c = next();
      if (c == '}') {
        return null;
      }
      if (c != ',') {
        throw new IllegalArgumentException("expected , or } at " + (at - 1));
      }
    }
  }

  private Object value() {
    return switch (peek()) {
      case '{' -> nested(true);
      case '[' -> nested(false);
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Object nested(boolean isObject) {
    if (++depth > MAX_DEPTH) {
      throw new IllegalArgumentException("nested deeper than " + MAX_DEPTH + " at " + at);
    }
    Object container = isObject ? object() : array();
    depth--;
    return container;
  }

  private Map<String, Object> object() {
    Map<String, Object> map = new LinkedHashMap<>();
    expect('{');
    space();
    if (peek() == '}') {
      at++;
      return map;
    }
    while (true) {
      space();
      String key = string();
      space();
      expect(':');
      space();
      map.put(key, value());
      space();
      if (peek() == ',') {
        at++;
      } else {
        expect('}');
        return map;
      }
    }
  }

  private List<Object> array() {
    List<Object> list = new ArrayList<>();
    expect('[');
    space();
    if (peek() == ']') {
      at++;
      return list;
    }
    while (true) {
      space();
      list.add(value());
      space();
      if (peek() == ',') {
        at++;
      } else {
        expect(']');
        return list;
      }
    }
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = next();
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          if (at + 4 > text.length()) {
            throw new IllegalArgumentException("unterminated \\u escape at " + at);
          }
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw new IllegalArgumentException("bad escape \\" + e + " at " + (at - 1));
      }
    }
  }

  private Object number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    if (start == at) {
      throw new IllegalArgumentException("unexpected '" + peek() + "' at " + at);
    }
    BigDecimal n = new BigDecimal(text.substring(start, at));
    if (n.scale() <= 0) {
      try {
        return n.longValueExact();
      } catch (ArithmeticException tooLarge) {
        return n;
      }
    }
    return n;
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw new IllegalArgumentException("unexpected text at " + at);
    }
    at += word.length();
    return value;
  }

  private void expect(char c) {
    if (peek() != c) {
      throw new IllegalArgumentException("expected '" + c + "' at " + at);
    }
    at++;
  }

  private char peek() {
    if (at >= text.length()) {
      throw new IllegalArgumentException("unexpected end of text at " + at);
    }
    return text.charAt(at);
  }

  private char next() {
    char c = peek();
    at++;
    return c;
  }

  private void space() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
  }
}
