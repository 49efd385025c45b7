package dev.idemkit.examples.provider;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The little JSON the simulator speaks, with the JDK alone: it writes maps (keys sorted, so one
 * answer is always the same text), lists, strings, numbers, booleans and {@code null}, and reads
 * the flat objects its requests are ({@code {"amount":"10.00","currency":"EUR",...}}), each value a
 * string, a number, a boolean or {@code null}.
 */
final class SimulatorJson {

  private SimulatorJson() {}

  /** {@code value} as JSON text. */
  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value == null || value instanceof Boolean || value instanceof Number) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      String separator = "";
      for (Map.Entry<?, ?> e : new TreeMap<>(map).entrySet()) {
        out.append(separator);
        string(String.valueOf(e.getKey()), out);
        out.append(':');
        write(e.getValue(), out);
        separator = ",";
      }
      out.append('}');
    } else if (value instanceof Collection<?> list) {
      out.append('[');
      String separator = "";
      for (Object item : list) {
        out.append(separator);
        write(item, out);
        separator = ",";
      }
      out.append(']');
    } else {
      string(value.toString(), out);
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /**
   * Reads a flat JSON object: its values as strings (a number as written, {@code true}/{@code
   * false} as those words), {@code null} as {@code null}.
   *
   * @throws IllegalArgumentException if {@code json} is not such an object
   */
  static Map<String, String> readFlatObject(String json) {
    Reader r = new Reader(json);
    Map<String, String> object = new LinkedHashMap<>();
    r.skipSpace();
    r.expect('{');
    r.skipSpace();
    if (r.peek() == '}') {
      r.pos++;
    } else {
      while (true) {
        r.skipSpace();
        String key = r.string();
        r.skipSpace();
        r.expect(':');
        r.skipSpace();
        object.put(key, r.scalar());
        r.skipSpace();
        if (r.peek() == ',') {
          r.pos++;
          continue;
        }
        r.expect('}');
        break;
      }
    }
    r.skipSpace();
    if (r.pos != json.length()) {
      throw new IllegalArgumentException("Text after the JSON object at " + r.pos);
    }
    return object;
  }

  private static final class Reader {
    private final String s;
    private int pos;

    Reader(String s) {
      this.s = s;
    }

    char peek() {
      if (pos >= s.length()) {
        throw new IllegalArgumentException("Unexpected end of JSON");
      }
      return s.charAt(pos);
    }

    void expect(char c) {
      if (peek() != c) {
        throw new IllegalArgumentException("Expected '" + c + "' at " + pos);
      }
      pos++;
    }

    void skipSpace() {
      while (pos < s.length() && " \t\r\n".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
    }

    String scalar() {
      char c = peek();
      if (c == '"') {
        return string();
      }
      int start = pos;
      while (pos < s.length() && ",} \t\r\n".indexOf(s.charAt(pos)) < 0) {
        pos++;
      }
      String word = s.substring(start, pos);
      if (word.equals("null")) {
        return null;
      }
      if (word.equals("true")
          || word.equals("false")
          || word.matches("-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?")) {
        return word;
      }
      throw new IllegalArgumentException("Not a flat JSON value at " + start + ": " + word);
    }

    String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        char c = peek();
        pos++;
        if (c == '"') {
          return out.toString();
        }
        if (c < 0x20) {
          throw new IllegalArgumentException("Control character in a JSON string at " + pos);
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = peek();
        pos++;
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (pos + 4 > s.length()) {
              throw new IllegalArgumentException("Short \\u escape at " + pos);
            }
            out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default -> throw new IllegalArgumentException("Bad escape at " + pos);
        }
      }
    }
  }
}
