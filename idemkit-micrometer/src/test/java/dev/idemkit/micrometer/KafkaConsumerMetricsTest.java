package dev.idemkit.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.EventEnvelope;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class KafkaConsumerMetricsTest {

  @Test
  void countsRetriesPerConsumerAndTheLag() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Instant now = Instant.parse("2026-12-01T00:00:10Z");
    KafkaConsumerMetrics metrics =
        new KafkaConsumerMetrics(registry, Clock.fixed(now, ZoneOffset.UTC));

    metrics.partitionRetried("receipts");
    metrics.applied(
        "ledger",
        List.of(
            new EventEnvelope(
                UUID.randomUUID(),
                "PaymentCompleted",
                "t",
                "payment",
                "p1",
                1,
                Instant.parse("2026-12-01T00:00:07.500Z"),
                "{}")));

    assertThat(
            registry
                .get(KafkaConsumerMetrics.PARTITION_RETRIES)
                .tag("consumer", "receipts")
                .counter()
                .count())
        .isEqualTo(1.0);
    assertThat(registry.get(KafkaConsumerMetrics.LAG).gauge().value()).isEqualTo(2500.0);
  }
}
