package dev.idemkit.client;

import java.util.Locale;
import java.util.Optional;

/**
 * Reads one top-level string field of a small JSON object, such as {@code errorCode} and {@code
 * detail} of an RFC 9457 problem or {@code key} of an issued key, without a JSON library. Nested
 * objects and arrays are skipped, not searched; anything that is not a well-formed object yields
 * nothing rather than an exception, because it only ever decorates an answer that is already there.
 */
final class JsonFields {

  private final String json;
  private int at;

  private JsonFields(String json) {
    this.json = json;
  }

  /**
   * The value of the top-level string field {@code name}, unescaped; empty if the text is not a
   * JSON object, has no such field, or the field is not a string.
   */
  static Optional<String> string(String json, String name) {
    if (json == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(new JsonFields(json).find(name));
    } catch (IllegalArgumentException
        | IllegalStateException
        | IndexOutOfBoundsException malformed) {
      return Optional.empty();
    }
  }

  /** Escapes a Java string as a JSON string literal, quotes included. */
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

  private String find(String name) {
    skipWhitespace();
    expect('{');
    skipWhitespace();
    if (peek() == '}') {
      return null;
    }
    while (true) {
      skipWhitespace();
      String field = readString();
      skipWhitespace();
      expect(':');
      skipWhitespace();
      if (field.equals(name) && peek() == '"') {
        return readString();
      }
      skipValue();
      skipWhitespace();
      char c = json.charAt(at++);
      if (c == '}') {
        return null;
      }
      if (c != ',') {
        throw new IllegalStateException("expected , or }");
      }
    }
  }

  private void skipValue() {
    char c = peek();
    switch (c) {
      case '"' -> readString();
      case '{' -> skipContainer('{', '}');
      case '[' -> skipContainer('[', ']');
      default -> {
        // A number or a literal: up to the next delimiter.
        int start = at;
        while (at < json.length() && ",}] \t\r\n".indexOf(json.charAt(at)) < 0) {
          at++;
        }
        if (at == start) {
          throw new IllegalStateException("expected a value");
        }
      }
    }
  }

  private void skipContainer(char open, char close) {
    expect(open);
    int depth = 1;
    while (depth > 0) {
      char c = peek();
      if (c == '"') {
        readString();
        continue;
      }
      at++;
      if (c == open) {
        depth++;
      } else if (c == close) {
        depth--;
      }
    }
  }

  private String readString() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = json.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = json.charAt(at++);
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          out.append((char) Integer.parseInt(json.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw new IllegalStateException("bad escape");
      }
    }
  }

  private void expect(char c) {
    if (json.charAt(at) != c) {
      throw new IllegalStateException("expected " + c);
    }
    at++;
  }

  private char peek() {
    return json.charAt(at);
  }

  private void skipWhitespace() {
    while (at < json.length() && " \t\r\n".indexOf(json.charAt(at)) >= 0) {
      at++;
    }
  }
}
