package dev.idemkit.examples.payments.web;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The one spelling of a request path that the gate accepts, so that the gate and the router can
 * never read one request as two different paths.
 *
 * <p>Tomcat and Spring MVC both turn the raw path into another string before they route it: they
 * decode {@code %xx}, drop {@code ;parameters} from each segment, and Tomcat also resolves {@code
 * .}/{@code ..} and merges {@code //}. A gate that decides on the raw text while the router decides
 * on the transformed one can be walked around ({@code /v1;x/admin/...}, {@code /v1/%61dmin/...}).
 * Rather than re-implementing every transformation, a path is accepted only if it has none to
 * apply, and the gate then decides on its decoded form, which is exactly what the router matches:
 *
 * <ul>
 *   <li>it starts with {@code /} and has no empty segment ({@code //}, a trailing {@code /}) and no
 *       {@code .} or {@code ..} segment;
 *   <li>it has no {@code ;} (matrix parameters) and no backslash;
 *   <li>its raw characters are those RFC 3986 allows in a path;
 *   <li>{@code %xx} is well formed, decodes to valid UTF-8, and does not encode what may be written
 *       plainly or what would change the path's structure: no unreserved character ({@code %61} for
 *       {@code a}, {@code %2e} for {@code .}), no {@code /}, {@code \}, {@code ;}, {@code %}, and
 *       no control character (in the C1 block, U+0080–U+009F, neither: {@link InputText}).
 * </ul>
 *
 * A refusal says which rule the path breaks and where ({@link #problem}).
 */
public final class RequestPaths {

  private RequestPaths() {}

  /**
   * The decoded path of {@code rawPath} (as {@code HttpServletRequest.getRequestURI()} gives it:
   * undecoded, without the query), or empty if it is not in its one accepted spelling.
   */
  public static Optional<String> canonical(String rawPath) {
    return Optional.ofNullable(check(rawPath).path());
  }

  /**
   * Why {@code rawPath} is not in its one accepted spelling, as a sentence that says where (a
   * position counts the raw path's characters from 1); empty if it is.
   */
  public static Optional<String> problem(String rawPath) {
    return Optional.ofNullable(check(rawPath).problem());
  }

  /** The decoded path, or why there is none. */
  private record Checked(String path, String problem) {
    static Checked refused(String problem) {
      return new Checked(null, problem);
    }
  }

  private static Checked check(String rawPath) {
    if (rawPath == null || rawPath.isEmpty() || rawPath.charAt(0) != '/') {
      return Checked.refused("The path does not start with '/'.");
    }
    if (rawPath.equals("/")) {
      return new Checked("/", null);
    }
    ByteArrayOutputStream decoded = new ByteArrayOutputStream(rawPath.length());
    decoded.write('/');
    int segmentStart = 1;
    for (int i = 1; i <= rawPath.length(); i++) {
      char c = i < rawPath.length() ? rawPath.charAt(i) : '/';
      if (c == '/') {
        String segment = rawPath.substring(segmentStart, i);
        if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
          return Checked.refused(
              "The path has "
                  + (segment.isEmpty() ? "an empty segment" : "a '" + segment + "' segment")
                  + " at position "
                  + (segmentStart + 1)
                  + ".");
        }
        segmentStart = i + 1;
        decoded.write('/');
      } else if (c == '%') {
        if (i + 2 >= rawPath.length()) {
          return Checked.refused(malformedEscape(i));
        }
        int hi = hexValue(rawPath.charAt(i + 1));
        int lo = hexValue(rawPath.charAt(i + 2));
        if (hi < 0 || lo < 0) {
          return Checked.refused(malformedEscape(i));
        }
        int b = hi * 16 + lo;
        String escape = rawPath.substring(i, i + 3);
        if (b < 0x20 || b == 0x7f) {
          return Checked.refused(
              "The path has "
                  + escape
                  + ", "
                  + InputText.codePoint(b)
                  + " (a control character), at position "
                  + (i + 1)
                  + ".");
        }
        if (isUnreserved(b) || "/\\;%".indexOf(b) >= 0) {
          return Checked.refused(
              "The path percent-encodes '"
                  + (char) b
                  + "' as "
                  + escape
                  + " at position "
                  + (i + 1)
                  + ".");
        }
        decoded.write(b);
        i += 2;
      } else if (isPlainPathChar(c)) {
        decoded.write(c);
      } else {
        return Checked.refused(
            (c > 0x20 && c < 0x7f
                    ? "The path has '" + c + "'"
                    : "The path has " + InputText.codePoint(c) + ", not percent-encoded,")
                + " at position "
                + (i + 1)
                + ".");
      }
    }
    byte[] bytes = decoded.toByteArray();
    // The loop appended a '/' for the end of the last segment.
    ByteBuffer path = ByteBuffer.wrap(bytes, 0, bytes.length - 1);
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(path)
              .toString();
    } catch (CharacterCodingException e) {
      return Checked.refused(
          "The path's percent-encoded bytes are not UTF-8 (an invalid or overlong sequence).");
    }
    // A control character of the C1 block (U+0080–U+009F) is valid UTF-8, in two bytes.
    Optional<String> control = InputText.problem(text);
    if (control.isPresent()) {
      return Checked.refused("The decoded path " + control.get() + ".");
    }
    return new Checked(text, null);
  }

  private static String malformedEscape(int index) {
    return "The path has a '%' that is not followed by two hexadecimal digits at position "
        + (index + 1)
        + ".";
  }

  /** The value of an ASCII hexadecimal digit, or -1. */
  static int hexValue(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  /** RFC 3986 {@code unreserved}: ALPHA / DIGIT / "-" / "." / "_" / "~". */
  private static boolean isUnreserved(int c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '-'
        || c == '.'
        || c == '_'
        || c == '~';
  }

  /**
   * A character a path segment may hold as it is: {@code pchar} without {@code %} and {@code ;}.
   */
  private static boolean isPlainPathChar(char c) {
    return isUnreserved(c) || "!$&'()*+,=:@".indexOf(c) >= 0;
  }
}
