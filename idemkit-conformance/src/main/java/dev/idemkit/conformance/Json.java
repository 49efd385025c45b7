package dev.idemkit.conformance;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Just enough JSON for the checker: parse an effect count answer into maps, lists, strings, numbers
 * and booleans, pick a value by a dotted path, and quote strings for the JSON report.
 */
final class Json {

  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  static Object parse(String text) {
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
   * The number a path names: {@code count}, {@code data.length} (an array's size), {@code
   * items.0.total}; an empty path means the document itself, an array counted by its size.
   */
  static long count(Object document, String path) {
    Object node = document;
    if (path != null && !path.isEmpty()) {
      for (String part : path.split("\\.")) {
        if (node instanceof Map<?, ?> map && map.containsKey(part)) {
          node = map.get(part);
        } else if (node instanceof List<?> list && "length".equals(part)) {
          node = list.size();
        } else if (node instanceof List<?> list && part.matches("\\d+")) {
          node = list.get(Integer.parseInt(part));
        } else {
          throw new IllegalArgumentException("no '" + part + "' in the effect answer");
        }
      }
    }
    if (node instanceof List<?> list) {
      return list.size();
    }
    if (node instanceof Number n) {
      return n.longValue();
    }
    if (node instanceof String s && s.matches("\\d+")) {
      return Long.parseLong(s);
    }
    throw new IllegalArgumentException(
        "the effect answer's '" + path + "' is not a count: " + node);
  }

  static String quote(String value) {
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

  private Object value() {
    char c = text.charAt(at);
    switch (c) {
      case '{' -> {
        return object();
      }
      case '[' -> {
        return array();
      }
      case '"' -> {
        return string();
      }
      case 't' -> {
        return literal("true", Boolean.TRUE);
      }
      case 'f' -> {
        return literal("false", Boolean.FALSE);
      }
      case 'n' -> {
        return literal("null", null);
      }
      default -> {
        return number();
      }
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> map = new LinkedHashMap<>();
    at++;
    space();
    if (text.charAt(at) == '}') {
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
      if (text.charAt(at) == ',') {
        at++;
      } else {
        expect('}');
        return map;
      }
    }
  }

  private List<Object> array() {
    List<Object> list = new ArrayList<>();
    at++;
    space();
    if (text.charAt(at) == ']') {
      at++;
      return list;
    }
    while (true) {
      space();
      list.add(value());
      space();
      if (text.charAt(at) == ',') {
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
      char c = text.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c == '\\') {
        char e = text.charAt(at++);
        switch (e) {
          case 'n' -> out.append('\n');
          case 't' -> out.append('\t');
          case 'r' -> out.append('\r');
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'u' -> {
            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            at += 4;
          }
          default -> out.append(e);
        }
      } else {
        out.append(c);
      }
    }
  }

  private Object number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    if (start == at) {
      throw new IllegalArgumentException("unexpected '" + text.charAt(at) + "' at " + at);
    }
    BigDecimal n = new BigDecimal(text.substring(start, at));
    return n.scale() <= 0 ? (Object) n.longValueExact() : n;
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw new IllegalArgumentException("unexpected text at " + at);
    }
    at += word.length();
    return value;
  }

  private void expect(char c) {
    if (text.charAt(at) != c) {
      throw new IllegalArgumentException("expected '" + c + "' at " + at);
    }
    at++;
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }
}
