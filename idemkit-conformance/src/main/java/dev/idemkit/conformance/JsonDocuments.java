package dev.idemkit.conformance;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * JSON through Jackson: the answers the checker reads (an effect count, a profile's code, the
 * identifiers in a body) as plain maps, lists, strings and numbers for {@link JsonPath}, and the
 * JSON report.
 */
final class JsonDocuments {

  /** One mapper: thread-safe once configured, shared by the checks and the report. */
  static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(SerializationFeature.INDENT_OUTPUT);

  private JsonDocuments() {}

  /**
   * A JSON text as maps, lists, strings, numbers, booleans and null.
   *
   * @throws IllegalArgumentException when it is not one JSON value
   */
  static Object parse(String text) {
    try {
      return MAPPER.readValue(text, Object.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
    }
  }
}
