package dev.idemkit.chaos;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The chaos run's one JSON mapper (Jackson, which the tool already carries for the service's mail
 * simulator): the clients' request bodies and the answers they read, the mail simulator's and the
 * instances' health answers, the history's lines and the report. Map entries are written in key
 * order, so that a history line's {@code value} reads the same whatever order it was built in.
 */
final class Json {

  static final JsonMapper MAPPER =
      JsonMapper.builder().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).build();

  private Json() {}

  /** One line of JSON. */
  static String write(Object value) {
    return MAPPER.writeValueAsString(value);
  }

  /**
   * The text as a JSON tree, or a missing node when it is not JSON (an HTML error page, a torn
   * answer), so that a caller's {@code path(...)} finds nothing rather than throwing.
   */
  static JsonNode read(String text) {
    try {
      return MAPPER.readTree(text);
    } catch (JacksonException notJson) {
      return MAPPER.missingNode();
    }
  }
}
