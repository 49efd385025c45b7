package dev.idemkit.examples.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimulatorJsonTest {

  @Test
  void writesKeysSortedAndValuesByType() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", "SUCCEEDED");
    body.put("charged", false);
    body.put("count", 3L);
    body.put("faults", List.of("latency", "decline"));
    body.put("note", "a \"quoted\" \\ line\nand\u0001");
    body.put("none", null);

    assertThat(SimulatorJson.write(body))
        .isEqualTo(
            "{\"charged\":false,\"count\":3,\"faults\":[\"latency\",\"decline\"],"
                + "\"none\":null,\"note\":\"a \\\"quoted\\\" \\\\ line\\nand\\u0001\","
                + "\"status\":\"SUCCEEDED\"}");
  }

  @Test
  void readsAFlatObjectWithStringsNumbersAndLiterals() {
    Map<String, String> read =
        SimulatorJson.readFlatObject(
            " { \"amount\" : \"10.00\", \"n\": -1.5e3, \"ok\": true, \"gone\": null,"
                + " \"ref\": \"a\\\"b\\u00e9\" } ");

    assertThat(read)
        .containsEntry("amount", "10.00")
        .containsEntry("n", "-1.5e3")
        .containsEntry("ok", "true")
        .containsEntry("gone", null)
        .containsEntry("ref", "a\"b\u00e9");
    assertThat(SimulatorJson.readFlatObject("{}")).isEmpty();
  }

  @Test
  void refusesWhatIsNotAFlatObject() {
    for (String bad :
        List.of(
            "",
            "[]",
            "{\"a\":{\"b\":\"c\"}}",
            "{\"a\":[1]}",
            "{\"a\":\"b\"",
            "{\"a\":\"b\"} x",
            "{\"a\":nope}",
            "{a:\"b\"}",
            "{\"a\":\"\\u12\"}")) {
      assertThatThrownBy(() -> SimulatorJson.readFlatObject(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
