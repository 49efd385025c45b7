package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonFieldRedactorTest {

  private static final JsonFieldRedactor CARDS =
      JsonFieldRedactor.of(
          List.of("card.cvc", "cards.cvc"), List.of("card.number", "cards.number"));

  @Test
  void dropsAndMasksByPathKeepingOrderAndEscapes() {
    String body =
        "{\"note\":\"a \\\"q\\\"\\n\",\"card\":{\"number\":\"4242424242424242\",\"cvc\":\"737\"},"
            + "\"cards\":[{\"number\":\"5555555555554444\",\"cvc\":\"123\"}],\"n\":1.50,\"ok\":true}";

    assertThat(redact(body, "application/json"))
        .isEqualTo(
            "{\"note\":\"a \\\"q\\\"\\n\",\"card\":{\"number\":\"************4242\"},"
                + "\"cards\":[{\"number\":\"************4444\"}],\"n\":1.50,\"ok\":true}");
  }

  @Test
  void masksACardNumberWrittenAsAJsonNumber() {
    String body = "{\"card\":{\"number\":4242424242424242,\"cvc\":737},\"n\":1}";

    assertThat(redact(body, "application/json"))
        .doesNotContain("424242424242")
        .isEqualTo("{\"card\":{\"number\":\"************4242\"},\"n\":1}");
  }

  @Test
  void findsTheContentTypeInAnyCaseAndReadsJsonWithoutOne() {
    String body = "{\"card\":{\"number\":\"4242424242424242\",\"cvc\":\"737\"}}";
    String redacted = "{\"card\":{\"number\":\"************4242\"}}";

    assertThat(redact(body, Map.of("content-type", "application/json"))).isEqualTo(redacted);
    assertThat(redact(body, Map.of())).isEqualTo(redacted);
    assertThat(redact("not json at all", Map.of())).isEqualTo("not json at all");
  }

  @Test
  void leavesOtherContentAlone() {
    assertThat(redact("card.cvc=737", "text/plain")).isEqualTo("card.cvc=737");
    assertThat(redact("{not json", "application/json")).isEqualTo("{not json");
  }

  private static String redact(String body, String type) {
    return redact(body, Map.of("Content-Type", type));
  }

  private static String redact(String body, Map<String, String> headers) {
    StoredResponse r = StoredResponse.of(200, headers, body.getBytes(StandardCharsets.UTF_8));
    return new String(CARDS.redact(ScopedKey.of("t", "op", "k"), r).body(), StandardCharsets.UTF_8);
  }
}
