package dev.idemkit;

import java.util.Locale;

/**
 * A client-chosen idempotency key: 1 to {@value #MAX_LENGTH} visible ASCII characters ({@code
 * 0x21}–{@code 0x7E}), so no spaces, control characters or non-ASCII characters. UUIDs, ULIDs and
 * most random tokens fit.
 *
 * <p>Keys are compared exactly, case included. The value is not secret, and {@link #toString()}
 * returns it as is.
 *
 * @param value the key
 */
public record IdempotencyKey(String value) {

  /** Longest key accepted, in characters. */
  public static final int MAX_LENGTH = 255;

  private static final String HEADER = "Idempotency-Key header";

  /**
   * Validates the key.
   *
   * @throws InvalidIdempotencyKeyException if the key is {@code null}, empty, longer than {@value
   *     #MAX_LENGTH} characters, or has a character outside {@code 0x21}–{@code 0x7E}
   */
  public IdempotencyKey {
    if (value == null) {
      throw new InvalidIdempotencyKeyException("idempotency key is missing (null)");
    }
    if (value.isEmpty()) {
      throw new InvalidIdempotencyKeyException("idempotency key is empty");
    }
    if (value.length() > MAX_LENGTH) {
      throw new InvalidIdempotencyKeyException(
          "idempotency key is too long: "
              + value.length()
              + " characters, at most "
              + MAX_LENGTH
              + " are allowed");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new InvalidIdempotencyKeyException(
            "idempotency key has a disallowed character at position "
                + (i + 1)
                + ": "
                + describe(value.codePointAt(i))
                + "; only visible ASCII characters (0x21-0x7E) are allowed");
      }
    }
  }

  /**
   * Returns the key with this value.
   *
   * @param value the key
   * @return the key
   * @throws InvalidIdempotencyKeyException if the value breaks the rules of this class
   */
  public static IdempotencyKey of(String value) {
    return new IdempotencyKey(value);
  }

  /**
   * Reads the value of an HTTP {@code Idempotency-Key} header field.
   *
   * <p>The header is a Structured Field item of type String (RFC 8941), as in {@code
   * Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"}; inside the quotes {@code \"} and
   * {@code \\} stand for {@code "} and {@code \}. The bare form {@code Idempotency-Key:
   * 8e03978e-40d5-43e8-bc93-6894a57f9324} is accepted too. Spaces and tabs around the value are
   * ignored.
   *
   * <p>Rejected, each with its own message: a missing or empty header, unbalanced or stray quotes,
   * several values (a comma outside quotes, which is also what a repeated header folds into),
   * parameters ({@code ;}), whitespace inside a bare key, and any key this class rejects.
   *
   * @param headerValue the field value, as received
   * @return the key
   * @throws InvalidIdempotencyKeyException if the header is missing or malformed
   */
  public static IdempotencyKey fromHeader(String headerValue) {
    if (headerValue == null) {
      throw new InvalidIdempotencyKeyException(HEADER + " is missing");
    }
    int start = 0;
    int end = headerValue.length();
    while (start < end && isOws(headerValue.charAt(start))) {
      start++;
    }
    while (end > start && isOws(headerValue.charAt(end - 1))) {
      end--;
    }
    if (start == end) {
      throw new InvalidIdempotencyKeyException(HEADER + " is empty");
    }
    if (headerValue.charAt(start) == '"') {
      return fromQuoted(headerValue, start, end);
    }
    for (int i = start; i < end; i++) {
      char c = headerValue.charAt(i);
      String problem =
          switch (c) {
            case ',' -> "has several values (a ',' at position " + (i + 1) + "); send one key";
            case ';' -> "has parameters (a ';' at position " + (i + 1) + "), which are not allowed";
            case '"' ->
                "has an unbalanced '\"' at position "
                    + (i + 1)
                    + "; quote the whole key, as in \"abc-123\", or not at all";
            case ' ', '\t' ->
                "has whitespace inside the key at position "
                    + (i + 1)
                    + "; a key cannot contain spaces or tabs";
            default -> null;
          };
      if (problem != null) {
        throw new InvalidIdempotencyKeyException(HEADER + " " + problem);
      }
    }
    return headerKey(headerValue.substring(start, end));
  }

  private static IdempotencyKey fromQuoted(String header, int open, int end) {
    StringBuilder key = new StringBuilder();
    int i = open + 1;
    while (true) {
      if (i >= end) {
        throw new InvalidIdempotencyKeyException(
            HEADER + " has an unterminated quoted string: no closing '\"'");
      }
      char c = header.charAt(i);
      if (c == '"') {
        break;
      }
      if (c == '\\') {
        char next = i + 1 < end ? header.charAt(i + 1) : 0;
        if (next != '"' && next != '\\') {
          throw new InvalidIdempotencyKeyException(
              HEADER
                  + " has an invalid escape at position "
                  + (i + 1)
                  + "; inside quotes only \\\" and \\\\ are allowed");
        }
        key.append(next);
        i += 2;
      } else {
        key.append(c);
        i++;
      }
    }
    int rest = i + 1;
    while (rest < end && isOws(header.charAt(rest))) {
      rest++;
    }
    if (rest < end) {
      char c = header.charAt(rest);
      if (c == ',') {
        throw new InvalidIdempotencyKeyException(
            HEADER + " has several values (a ',' at position " + (rest + 1) + "); send one key");
      }
      if (c == ';') {
        throw new InvalidIdempotencyKeyException(
            HEADER
                + " has parameters (a ';' at position "
                + (rest + 1)
                + "), which are not allowed");
      }
      throw new InvalidIdempotencyKeyException(
          HEADER + " has unexpected characters after the closing quote, at position " + (rest + 1));
    }
    return headerKey(key.toString());
  }

  /** Returns the key itself. */
  @Override
  public String toString() {
    return value;
  }

  /**
   * The key read from a header. Servlet containers hand header bytes over one character per byte
   * (ISO-8859-1), so a UTF-8 character such as {@code é} arrives as two characters, the first
   * {@code U+00C3}: naming that code point would name a character the client never sent. A byte
   * outside ASCII is named as a byte instead.
   */
  private static IdempotencyKey headerKey(String key) {
    for (int i = 0; i < key.length() && key.length() <= MAX_LENGTH; i++) {
      char c = key.charAt(i);
      if (c >= 0x80 && c <= 0xFF) {
        throw new InvalidIdempotencyKeyException(
            String.format(
                Locale.ROOT,
                "%s has a non-ASCII byte 0x%02X at position %d; a key is visible ASCII characters"
                    + " (0x21-0x7E) only",
                HEADER,
                (int) c,
                i + 1));
      }
    }
    return new IdempotencyKey(key);
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  private static String describe(int codePoint) {
    String hex = String.format(Locale.ROOT, "U+%04X", codePoint);
    if (codePoint == ' ') {
      return hex + " (space)";
    }
    if (codePoint < 0x20 || codePoint == 0x7F) {
      return hex + " (control character)";
    }
    return hex + " (non-ASCII character)";
  }
}
