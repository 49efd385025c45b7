package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The document's patterns say what the service's checks say (ECMA-262 and Java read them alike).
 */
class DocumentedRulesTest {

  private static boolean matches(String pattern, String value) {
    return Pattern.compile(pattern).matcher(value).find();
  }

  @Test
  void theKeyPatternTakes255CharactersBareOrQuotedAndNoMore() {
    String key = DocumentedRules.IDEMPOTENCY_KEY;
    assertThat(matches(key, "k".repeat(255))).isTrue();
    assertThat(matches(key, "k".repeat(256))).isFalse();
    assertThat(matches(key, "\"" + "k".repeat(255) + "\"")).isTrue();
    assertThat(matches(key, "\"" + "k".repeat(256) + "\"")).isFalse();
    assertThat(matches(key, "\"a\\\"b\"")).isTrue();
    assertThat(matches(key, "a,b")).isFalse();
    assertThat(matches(key, "a;b")).isFalse();
    assertThat(matches(key, "a b")).isFalse();
  }

  @Test
  void theAmountPatternIsPositiveAndAtMostOneBillion() {
    String amount = DocumentedRules.AMOUNT;
    assertThat(matches(amount, "10.00")).isTrue();
    assertThat(matches(amount, "1000000000")).isTrue();
    assertThat(matches(amount, "1000000000.00")).isTrue();
    assertThat(matches(amount, "1000000000.01")).isFalse();
    assertThat(matches(amount, "1000000001")).isFalse();
    assertThat(matches(amount, "0")).isFalse();
    assertThat(matches(amount, "0.00")).isFalse();
    assertThat(matches(amount, "-5")).isFalse();
    assertThat(matches(amount, "1.1234567")).isFalse();
  }

  @Test
  void aReferenceTakesNoInvisibleOrBidiCharacterAndIsNotBlank() {
    assertThat(matches(DocumentedRules.REFERENCE, "café")).isTrue();
    assertThat(matches(DocumentedRules.REFERENCE, "a\u200Bb")).isFalse();
    assertThat(matches(DocumentedRules.REFERENCE, "a\u202Eb")).isFalse();
    assertThat(matches(DocumentedRules.REFERENCE, "a\u0000b")).isFalse();
    assertThat(matches(DocumentedRules.REFERENCE, "   ")).isFalse();
    assertThat(matches(DocumentedRules.REFERENCE_TEXT, "")).isTrue();
  }
}
