package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QueryStringsTest {

  @Test
  void aParameterWithoutANameIsRefused() {
    assertThat(QueryStrings.problem("=1")).hasValueSatisfying(p -> p.contains("has no name"));
    assertThat(QueryStrings.problem("a=1&=2")).isPresent();
  }

  @Test
  void aParameterSentTwiceIsRefusedWhateverItsSpelling() {
    assertThat(QueryStrings.problem("key=a&key=b"))
        .hasValueSatisfying(p -> p.contains("key is sent more than once"));
    assertThat(QueryStrings.problem("key=a&k%65y=b")).isPresent();
  }

  @Test
  void distinctParametersAndEmptyPairsPass() {
    assertThat(QueryStrings.problem("merchantReference=a&accountId=b")).isEmpty();
    assertThat(QueryStrings.problem("a=1&&b=2&")).isEmpty();
  }
}
