package dev.idemkit.outbox;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;

/**
 * Checks that a text is exactly one well-formed RFC 8259 JSON value, with surrounding whitespace
 * allowed: no comments, no trailing commas, no single quotes, no leading zeros, no raw control
 * characters in strings, nothing after the value. Jackson's streaming parser reads the tokens (its
 * strict defaults are RFC 8259) and builds no tree, so it costs little on the append path. It does
 * not look for duplicate object keys. Nesting deeper than {@value #MAX_DEPTH} levels is refused, so
 * a hostile payload cannot exhaust the stack.
 */
final class JsonSyntax {

  /** Deepest nesting of objects and arrays accepted. */
  static final int MAX_DEPTH = 512;

  private static final JsonFactory JSON =
      JsonFactory.builder()
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
          .build();

  private JsonSyntax() {}

  /**
   * Answers quietly if {@code text} is one JSON value.
   *
   * @param what the name used in the error, e.g. {@code payload}
   * @throws IllegalArgumentException naming {@code what}, the problem and its 0-based position
   */
  static void requireValue(String text, String what) {
    try (JsonParser p = JSON.createParser(ObjectReadContext.empty(), text)) {
      if (p.nextToken() == null) {
        throw fail(what, "no value", text.length());
      }
      p.skipChildren();
      if (p.nextToken() != null) {
        throw fail(what, "content after the JSON value", offset(p.currentTokenLocation()));
      }
    } catch (StreamConstraintsException e) {
      throw fail(what, "nested deeper than " + MAX_DEPTH + " levels", offset(e.getLocation()));
    } catch (JacksonException e) {
      throw fail(what, e.getOriginalMessage(), offset(e.getLocation()));
    }
  }

  private static long offset(TokenStreamLocation at) {
    return at == null ? -1 : at.getCharOffset();
  }

  private static IllegalArgumentException fail(String what, String problem, long at) {
    return new IllegalArgumentException(
        what + " is not one well-formed JSON value: " + problem + " at character " + at);
  }
}
