package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.examples.payments.receipts.ReceiptsConsumer;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code payments.events.delivery-retention} shorter than the receipts inbox's retention: a mail's
 * key would be forgotten while the message that recorded it is still remembered, so the service
 * refuses to start, naming both; equal to it, the service starts. On an embedded PostgreSQL of its
 * own.
 */
class DeliveryRetentionStartupIT {

  private static Path dataDir;

  @BeforeAll
  static void database() throws IOException {
    dataDir = HttpTestSupport.ownDataDir("delivery-retention-pg");
  }

  @Test
  void aDeliveryRetentionShorterThanTheInboxRetentionRefusesToStart() {
    assertThatThrownBy(
            () ->
                start(
                        "--payments.events.inbox-retention=P10D",
                        "--payments.events.delivery-retention=P7D")
                    .close())
        .rootCause()
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContainingAll(
            "refuses to start",
            "deliveredRetention (PT168H)",
            "inbox consumer " + ReceiptsConsumer.NAME,
            "(PT240H)");

    try (ConfigurableApplicationContext started =
        start(
            "--payments.events.inbox-retention=P10D",
            "--payments.events.delivery-retention=P10D")) {
      assertThat(started.isRunning()).isTrue();
    }
  }

  private static ConfigurableApplicationContext start(String... args) {
    return HttpTestSupport.startService(dataDir, args);
  }
}
