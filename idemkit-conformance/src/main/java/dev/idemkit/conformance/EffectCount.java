package dev.idemkit.conformance;

import java.util.List;
import java.util.Map;

/** The number of effects in the effect URL's answer, found by a dotted path (--effect-count). */
final class EffectCount {

  private EffectCount() {}

  /**
   * The number a path names in a parsed JSON document: {@code count}, {@code data.length} (an
   * array's size), {@code items.0.total}; an empty path means the document itself, an array counted
   * by its size.
   */
  static long of(Object document, String path) {
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
}
