package dev.idemkit.examples.payments.web;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The query string as the gate reads it, before anything asks Tomcat for a parameter: every name
 * and value must be percent-encoded UTF-8 ({@code %ff} and the overlong {@code %C0%80} are not) and
 * hold text the service takes ({@link InputText#problem}: {@code %00} is a control character).
 *
 * <p>Tomcat decodes the parameters only when one is first asked for, and then throws on bytes that
 * are not UTF-8 ({@code InvalidParameterException}); a NUL it decodes, and PostgreSQL refuses it in
 * any query. Either was a 500. Read here first, whatever the endpoint, such a query is a 400 that
 * names the parameter and the bytes or the character.
 */
final class QueryStrings {

  private QueryStrings() {}

  /**
   * What is wrong with the raw query string ({@code HttpServletRequest.getQueryString()}:
   * undecoded, without the {@code ?}), as a sentence that names the parameter; empty if nothing.
   */
  static Optional<String> problem(String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return Optional.empty();
    }
    Set<String> names = new HashSet<>();
    for (String pair : rawQuery.split("&", -1)) {
      if (pair.isEmpty()) {
        continue;
      }
      int equals = pair.indexOf('=');
      String rawName = equals < 0 ? pair : pair.substring(0, equals);
      if (rawName.isEmpty()) {
        // Tomcat refuses "=1" while parsing (an InvalidParameterException, once a 500).
        return Optional.of(
            "A query parameter has no name (\"" + pair + "\"); name it or leave it out.");
      }
      Decoded name = decode(rawName);
      // A name that does not decode is named as it was sent (percent-encoded, so printable).
      String shown = name.text() == null ? rawName : name.text();
      if (name.problem() != null) {
        return Optional.of("The name of query parameter " + rawName + " " + name.problem() + ".");
      }
      Optional<String> nameText = InputText.problem(shown);
      if (nameText.isPresent()) {
        return Optional.of("The name of query parameter " + rawName + " " + nameText.get() + ".");
      }
      if (!names.add(shown)) {
        // Which of two values would count depends on the reader: Spring joins them with ','.
        return Optional.of("Query parameter " + shown + " is sent more than once; send it once.");
      }
      if (equals < 0) {
        continue;
      }
      Decoded value = decode(pair.substring(equals + 1));
      if (value.problem() != null) {
        return Optional.of("Query parameter " + shown + " " + value.problem() + ".");
      }
      Optional<String> valueText = InputText.problem(value.text());
      if (valueText.isPresent()) {
        return Optional.of("Query parameter " + shown + " " + valueText.get() + ".");
      }
    }
    return Optional.empty();
  }

  /** A decoded name or value, or why it does not decode. */
  private record Decoded(String text, String problem) {}

  /** {@code application/x-www-form-urlencoded} decoding as Tomcat does it, but strict. */
  private static Decoded decode(String raw) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '+') {
        bytes.write(' ');
      } else if (c == '%') {
        int hi = i + 1 < raw.length() ? RequestPaths.hexValue(raw.charAt(i + 1)) : -1;
        int lo = i + 2 < raw.length() ? RequestPaths.hexValue(raw.charAt(i + 2)) : -1;
        if (hi < 0 || lo < 0) {
          return new Decoded(
              null,
              "has a '%' that is not followed by two hexadecimal digits (write '%' itself as %25)");
        }
        bytes.write(hi * 16 + lo);
        i += 2;
      } else if (c > 0x7f) {
        // Not in a query Tomcat accepts; here for a caller of this method alone.
        return new Decoded(null, "has a character that is not percent-encoded");
      } else {
        bytes.write(c);
      }
    }
    return utf8(bytes.toByteArray());
  }

  /** The text of {@code bytes}, or which of them are not UTF-8 (overlong forms are not). */
  private static Decoded utf8(byte[] bytes) {
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CharBuffer out = CharBuffer.allocate(bytes.length);
    CoderResult result = decoder.decode(in, out, true);
    if (result.isUnderflow()) {
      result = decoder.flush(out);
    }
    if (result.isError()) {
      // The refused bytes, with the continuation bytes that follow them: an overlong NUL is shown
      // whole (%C0%80), not as its first byte.
      int end = in.position() + result.length();
      while (end < bytes.length && end < in.position() + 4 && (bytes[end] & 0xC0) == 0x80) {
        end++;
      }
      StringBuilder bad = new StringBuilder();
      for (int i = in.position(); i < end; i++) {
        bad.append(String.format(Locale.ROOT, "%%%02X", bytes[i] & 0xff));
      }
      int position = out.flip().codePoints().toArray().length + 1;
      return new Decoded(
          null,
          "has "
              + bad
              + " at position "
              + position
              + ", which is not UTF-8 (an invalid or overlong sequence; percent-encode the"
              + " text's UTF-8 bytes)");
    }
    return new Decoded(out.flip().toString(), null);
  }
}
