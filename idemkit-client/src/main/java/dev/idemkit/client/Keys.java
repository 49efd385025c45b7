package dev.idemkit.client;

import java.util.Locale;
import java.util.UUID;

/**
 * The key rules of the server side ({@code dev.idemkit.IdempotencyKey}), repeated here so that the
 * client depends on nothing: 1 to {@value #MAX_LENGTH} visible ASCII characters ({@code
 * 0x21}–{@code 0x7E}). A key that breaks them is refused before anything is sent or journaled.
 */
final class Keys {

  /** Longest key, in characters. */
  static final int MAX_LENGTH = 255;

  private Keys() {}

  /** A fresh random key: a version 4 UUID, drawn once per intended operation. */
  static String random() {
    return UUID.randomUUID().toString();
  }

  /**
   * Returns the key if it follows the rules.
   *
   * @throws IllegalArgumentException saying which rule the key breaks
   */
  static String requireValid(String key) {
    if (key == null) {
      throw new IllegalArgumentException("idempotency key is missing (null)");
    }
    if (key.isEmpty()) {
      throw new IllegalArgumentException("idempotency key is empty");
    }
    if (key.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "idempotency key is too long: "
              + key.length()
              + " characters, at most "
              + MAX_LENGTH
              + " are allowed");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new IllegalArgumentException(
            "idempotency key has a disallowed character at position "
                + (i + 1)
                + ": "
                + String.format(Locale.ROOT, "U+%04X", key.codePointAt(i))
                + "; only visible ASCII characters (0x21-0x7E) are allowed");
      }
    }
    return key;
  }

  /**
   * The {@code Idempotency-Key} field value for a valid key: the bare key, which every server
   * reads, unless it holds a character that the bare form cannot carry ({@code "}, {@code ,},
   * {@code ;}); then a Structured Field string (RFC 8941), quoted, with {@code \} and {@code "}
   * escaped.
   */
  static String headerValue(String key) {
    boolean bare = true;
    for (int i = 0; i < key.length() && bare; i++) {
      char c = key.charAt(i);
      bare = c != '"' && c != ',' && c != ';';
    }
    if (bare) {
      return key;
    }
    StringBuilder quoted = new StringBuilder(key.length() + 8).append('"');
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '"' || c == '\\') {
        quoted.append('\\');
      }
      quoted.append(c);
    }
    return quoted.append('"').toString();
  }
}
