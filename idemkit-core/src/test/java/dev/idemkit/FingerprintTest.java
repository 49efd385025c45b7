package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FingerprintTest {

  /** {@code printf '{"a":1}' | sha256sum}. */
  private static final String SHA256_OF_A_1 =
      "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862";

  @Test
  void isSha256OfTheCanonicalJson() {
    Fingerprint fingerprint = Fingerprint.of(Map.of("a", 1));

    assertThat(fingerprint.version()).isEqualTo("v1");
    assertThat(fingerprint.algorithm()).isEqualTo("sha256");
    assertThat(fingerprint.digest()).isEqualTo(SHA256_OF_A_1);
    assertThat(fingerprint).hasToString("v1:sha256:" + SHA256_OF_A_1);
  }

  @Test
  void ignoresKeyOrderAndDecimalScale() {
    Map<String, Object> first = new LinkedHashMap<>();
    first.put("amount", new BigDecimal("10.50"));
    first.put("currency", "EUR");
    first.put("lines", List.of(Map.of("sku", "A", "qty", 2)));
    Map<String, Object> second = new LinkedHashMap<>();
    second.put("lines", List.of(Map.of("qty", 2L, "sku", "A")));
    second.put("currency", "EUR");
    second.put("amount", new BigDecimal("10.5"));

    assertThat(Fingerprint.of(first)).isEqualTo(Fingerprint.of(second));
  }

  @Test
  void changesWithAnyValue() {
    Fingerprint base = Fingerprint.of(Map.of("amount", "10.50", "currency", "EUR"));

    assertThat(Fingerprint.of(Map.of("amount", "10.51", "currency", "EUR"))).isNotEqualTo(base);
    assertThat(Fingerprint.of(Map.of("amount", "10.50", "currency", "USD"))).isNotEqualTo(base);
    assertThat(Fingerprint.of(Map.of("amount", "10.50"))).isNotEqualTo(base);
    assertThat(Fingerprint.of(List.of(1, 2))).isNotEqualTo(Fingerprint.of(List.of(2, 1)));
  }

  @Test
  void parsesItsOwnTextForm() {
    Fingerprint fingerprint = Fingerprint.of(Map.of("order", "o-1"));

    Fingerprint parsed = Fingerprint.parse(fingerprint.toString());

    assertThat(parsed).isEqualTo(fingerprint);
    assertThat(parsed.toString()).isEqualTo(fingerprint.toString());
    assertThat(Fingerprint.parse("v1:sha256:" + SHA256_OF_A_1).digest()).isEqualTo(SHA256_OF_A_1);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "v1",
        "v1:sha256",
        "x2:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
        "v1:hmac-sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
        "v2:hmac-sha256::015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
        "v2:hmac-sha256:k/1:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
        "v1:sha512:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
        "v1:sha256:015ABD7F5CC57A2DD94B7590F04AD8084273905EE33EC5CEBEAE62276A97F862",
        "v1:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f86",
        "v1:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f8622",
        "v1:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f86g",
        "v1:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862:x",
        " v1:sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
      })
  void rejectsMalformedText(String text) {
    assertThatThrownBy(() -> Fingerprint.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void rejectsNullText() {
    assertThatThrownBy(() -> Fingerprint.parse(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null");
  }

  @Test
  void constructorValidatesEachComponent() {
    assertThatThrownBy(() -> new Fingerprint("2", "sha256", SHA256_OF_A_1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("version");
    assertThatThrownBy(() -> new Fingerprint("v1", "md5", SHA256_OF_A_1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("algorithm");
    assertThatThrownBy(() -> new Fingerprint("v1", "sha256", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("digest");
  }

  @Test
  void rejectsCommandsWithoutCanonicalForm() {
    assertThatThrownBy(() -> Fingerprint.of(Map.of("amount", Double.NaN)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
