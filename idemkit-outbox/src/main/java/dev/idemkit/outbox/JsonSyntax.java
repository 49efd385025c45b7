package dev.idemkit.outbox;

/**
 * Checks that a text is exactly one well-formed RFC 8259 JSON value, with surrounding whitespace
 * allowed: no comments, no trailing commas, no single quotes, no leading zeros, no raw control
 * characters in strings, nothing after the value. It builds nothing (one pass over the characters,
 * no allocation but the error), so it costs little on the append path. It does not look for
 * duplicate object keys. Nesting deeper than {@value #MAX_DEPTH} levels is refused, so a hostile
 * payload cannot exhaust the stack.
 */
final class JsonSyntax {

  /** Deepest nesting of objects and arrays accepted. */
  static final int MAX_DEPTH = 512;

  private final String text;
  private final String what;
  private int at;

  private JsonSyntax(String text, String what) {
    this.text = text;
    this.what = what;
  }

  /**
   * Answers quietly if {@code text} is one JSON value.
   *
   * @param what the name used in the error, e.g. {@code payload}
   * @throws IllegalArgumentException naming {@code what}, the problem and its 0-based position
   */
  static void requireValue(String text, String what) {
    JsonSyntax p = new JsonSyntax(text, what);
    p.skipWhitespace();
    p.value(0);
    p.skipWhitespace();
    if (p.at != text.length()) {
      throw p.fail("content after the JSON value");
    }
  }

  private void value(int depth) {
    int c = peek();
    switch (c) {
      case '{' -> object(depth + 1);
      case '[' -> array(depth + 1);
      case '"' -> string();
      case 't' -> literal("true");
      case 'f' -> literal("false");
      case 'n' -> literal("null");
      default -> {
        if (c == '-' || isDigit(c)) {
          number();
        } else {
          throw fail(c < 0 ? "the text ends where a value should start" : "unexpected " + show(c));
        }
      }
    }
  }

  private void object(int depth) {
    requireDepth(depth);
    at++; // {
    skipWhitespace();
    if (peek() == '}') {
      at++;
      return;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"') {
        throw fail("a member name (a string) is expected");
      }
      string();
      skipWhitespace();
      expect(':');
      skipWhitespace();
      value(depth);
      skipWhitespace();
      int c = peek();
      at++;
      if (c == '}') {
        return;
      }
      if (c != ',') {
        at--;
        throw fail("',' or '}' is expected");
      }
    }
  }

  private void array(int depth) {
    requireDepth(depth);
    at++; // [
    skipWhitespace();
    if (peek() == ']') {
      at++;
      return;
    }
    while (true) {
      skipWhitespace();
      value(depth);
      skipWhitespace();
      int c = peek();
      at++;
      if (c == ']') {
        return;
      }
      if (c != ',') {
        at--;
        throw fail("',' or ']' is expected");
      }
    }
  }

  private void string() {
    at++; // opening quote
    while (true) {
      int c = peek();
      if (c < 0) {
        throw fail("a string is not closed");
      }
      if (c == '"') {
        at++;
        return;
      }
      if (c < 0x20) {
        throw fail("unescaped control character " + show(c) + " in a string");
      }
      at++;
      if (c == '\\') {
        int e = peek();
        switch (e) {
          case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> at++;
          case 'u' -> {
            at++;
            for (int k = 0; k < 4; k++) {
              if (!isHex(peek())) {
                throw fail("\\u needs four hex digits");
              }
              at++;
            }
          }
          default -> throw fail("invalid escape in a string");
        }
      }
    }
  }

  private void number() {
    if (peek() == '-') {
      at++;
    }
    if (peek() == '0') {
      at++;
    } else if (isDigit(peek())) {
      digits();
    } else {
      throw fail("a number needs a digit");
    }
    if (peek() == '.') {
      at++;
      if (!isDigit(peek())) {
        throw fail("a fraction needs a digit");
      }
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      at++;
      if (peek() == '+' || peek() == '-') {
        at++;
      }
      if (!isDigit(peek())) {
        throw fail("an exponent needs a digit");
      }
      digits();
    }
  }

  private void digits() {
    while (isDigit(peek())) {
      at++;
    }
  }

  private void literal(String word) {
    if (!text.startsWith(word, at)) {
      throw fail("unexpected " + show(peek()));
    }
    at += word.length();
  }

  private void expect(char c) {
    if (peek() != c) {
      throw fail("'" + c + "' is expected");
    }
    at++;
  }

  private void requireDepth(int depth) {
    if (depth > MAX_DEPTH) {
      throw fail("nested deeper than " + MAX_DEPTH + " levels");
    }
  }

  private void skipWhitespace() {
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      at++;
    }
  }

  /** The character at the position, or -1 at the end. */
  private int peek() {
    return at < text.length() ? text.charAt(at) : -1;
  }

  private IllegalArgumentException fail(String problem) {
    return new IllegalArgumentException(
        what + " is not one well-formed JSON value: " + problem + " at character " + at);
  }

  private static boolean isDigit(int c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isHex(int c) {
    return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  private static String show(int c) {
    if (c < 0) {
      return "end of text";
    }
    return c < 0x20 || c == 0x7f ? String.format("U+%04X", c) : "'" + (char) c + "'";
  }
}
