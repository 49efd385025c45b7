package dev.idemkit.conformance;

import java.util.List;

/** The number of effects in the effect URL's answer, found by a dotted path (--effect-count). */
final class EffectCount {

  private EffectCount() {}

  /**
   * The number a path names in a parsed JSON document: {@code count}, {@code data.length} (an
   * array's size), {@code items.0.total}; an empty path means the document itself, an array counted
   * by its size.
   */
  static long of(Object document, String path) {
    Object node =
        JsonPath.find(document, path)
            .orElseThrow(() -> new IllegalArgumentException("no '" + path + "' in it"));
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
        (path == null || path.isEmpty() ? "it is" : "its '" + path + "' is")
            + " not a count (an array or a number)");
  }
}
