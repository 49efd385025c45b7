package dev.idemkit.conformance;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A dotted path into a parsed JSON document, as {@code --effect-count} and a profile's codes name a
 * value: {@code count}, {@code error.code}, {@code data.length} (an array's size), {@code
 * items.0.total}; an empty path is the document itself.
 */
final class JsonPath {

  private JsonPath() {}

  /** The value {@code path} names in {@code document}, or empty when there is none. */
  static Optional<Object> find(Object document, String path) {
    Object node = document;
    if (path == null || path.isEmpty()) {
      return Optional.ofNullable(node);
    }
    for (String part : path.split("\\.")) {
      if (node instanceof Map<?, ?> map && map.containsKey(part)) {
        node = map.get(part);
      } else if (node instanceof List<?> list && "length".equals(part)) {
        node = list.size();
      } else if (node instanceof List<?> list
          && part.matches("\\d{1,9}")
          && Integer.parseInt(part) < list.size()) {
        node = list.get(Integer.parseInt(part));
      } else {
        return Optional.empty();
      }
    }
    return Optional.ofNullable(node);
  }
}
