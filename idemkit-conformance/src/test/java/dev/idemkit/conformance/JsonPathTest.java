package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code --effect-count} and a profile's codes name a value by a dotted path; a path that names
 * nothing is empty, never an exception (which ended a run with a stack trace and exit status 1,
 * read as a failed check).
 */
class JsonPathTest {

  private static final Object DOCUMENT =
      Map.of("data", List.of(Map.of("total", 3L)), "error", Map.of("code", "in_use"));

  @Test
  void aPathNamesAValue() {
    assertThat(JsonPath.find(DOCUMENT, "data.length")).contains(1);
    assertThat(JsonPath.find(DOCUMENT, "data.0.total")).contains(3L);
    assertThat(JsonPath.find(DOCUMENT, "error.code")).contains("in_use");
  }

  @Test
  void anIndexPastAnyListIsNoValue() {
    assertThat(JsonPath.find(DOCUMENT, "data.1")).isEmpty();
    assertThat(JsonPath.find(DOCUMENT, "data.99999999999")).isEmpty();
    assertThat(JsonPath.find(DOCUMENT, "data.2147483648.total")).isEmpty();
  }
}
