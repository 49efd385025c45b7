package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.spi.EventTransport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The soak on Kafka: {@link SoakIT}'s payments, orders, faults and closing counts, with the
 * service's events going through a real broker (a single-node KRaft broker from Maven jars, in a
 * child JVM: idemkit-kafka-testkit) because {@code idemkit.events.kafka.bootstrap-servers} is set:
 * the relay sends to it ({@code acks=all}, 5% of the acknowledgements lost on the way back), and
 * the ledger, receipts and shipping consumers read it as consumer groups (failing after writing 5%
 * of the time). On a database of its own (a second embedded PostgreSQL), so that no other test
 * context's relay takes its events.
 *
 * <p>300 payments (and 30 orders) by default, to stay within a few minutes in CI; the full soak:
 * {@code ./mvnw -pl examples/payments-service -am verify -Dit.test=KafkaSoakIT
 * -Dsoak.kafka.payments=2000}.
 */
@TestPropertySource(
    properties = {
      "idemkit.embedded.data-dir=${payments.kafka-soak.data-dir}",
      "idemkit.events.kafka.bootstrap-servers=${payments.kafka-soak.bootstrap-servers}"
    })
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class KafkaSoakIT extends SoakIT {

  static {
    KafkaBroker broker = KafkaBroker.shared();
    broker.createTopic("idemkit.events.payment", 4);
    broker.createTopic("idemkit.events.order", 4);
    System.setProperty("payments.kafka-soak.bootstrap-servers", broker.bootstrapServers());
    try {
      Path dataDir = Files.createTempDirectory("payments-kafka-soak-pg").toAbsolutePath();
      System.setProperty("payments.kafka-soak.data-dir", dataDir.toString());
      Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteOnceStopped(dataDir)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Autowired EventTransport transport;
  @Autowired KafkaConsumers kafkaConsumers;

  @Test
  void theServicesEventsGoThroughTheBroker() {
    assertThat(transport).isInstanceOf(KafkaTransport.class);
    assertThat(kafkaConsumers.consumers())
        .extracting(KafkaEventConsumer::name)
        .containsExactlyInAnyOrder("ledger", "receipts", "shipping");
  }

  @Override
  int payments() {
    return Integer.getInteger("soak.kafka.payments", 300);
  }

  @Override
  String label() {
    return "SOAK-KAFKA";
  }

  /** Every consumer's inbox has every event (applied, or parked): none still on its way. */
  @Override
  boolean consumersCaughtUp() {
    for (String consumer : List.of("ledger", "receipts", "shipping")) {
      long missing =
          count(
              "select count(*) from idemkit_outbox o where not exists (select 1 from idemkit_inbox"
                  + " i where i.consumer_name = ? and i.message_id = o.event_id"
                  + " and i.status in ('PROCESSED', 'PARKED'))",
              consumer);
      if (missing > 0) {
        return false;
      }
    }
    return true;
  }
}
