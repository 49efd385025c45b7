package dev.idemkit.examples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EmbeddedProviderTest {

  @Test
  void theSimulatorsDatabaseIsNamedAfterTheServices() {
    assertThat(EmbeddedProvider.providerDatabase("jdbc:postgresql://localhost:5432/payments"))
        .isEqualTo("payments_provider");
    assertThat(EmbeddedProvider.providerDatabase("jdbc:postgresql://h:1/Shop-EU?ssl=false"))
        .isEqualTo("shop_eu_provider");
    assertThat(EmbeddedProvider.providerDatabase("jdbc:postgresql://localhost:5432/"))
        .isEqualTo("postgres_provider");
  }
}
