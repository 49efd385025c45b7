package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.appliedOrder;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.ds;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer.ParkedMessage;
import dev.idemkit.outbox.OutboxRelay;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A handler that throws an {@link Error} (not an exception) for a message: the polling thread goes
 * on, the message is a failed attempt like any other (not processed, read again, parked after the
 * last attempt) and the partition's other messages, then later ones, are applied.
 */
class KafkaHandlerErrorIT {

  @Test
  void anErrorFromTheHandlerFailsItsMessageAndTheConsumerGoesOn() throws Exception {
    String type = unique("account");
    String consumerName = unique("ledger");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 1); // everybody shares one partition
    var ledger = Fixture.ledger(consumerName);

    // Event ids derive from tenant, aggregate id and cause: causes of this test's own.
    append(type, List.of("asserting", "a", "deep", "b"), type + "-1");
    append(type, List.of("asserting", "a", "deep", "b"), type + "-2");

    try (KafkaTransport transport = Fixture.transport(bootstrap);
        OutboxRelay relay = Fixture.relay(transport).build().start();
        KafkaEventConsumer consumer =
            KafkaEventConsumer.builder(
                    bootstrap,
                    consumerName,
                    ds(),
                    (tx, m) -> {
                      if (m.sequence() == 1 && m.aggregateId().equals("asserting")) {
                        throw new AssertionError("the handler's own check failed");
                      }
                      if (m.sequence() == 1 && m.aggregateId().equals("deep")) {
                        recurse(m); // a real StackOverflowError
                      }
                      ledger.apply(tx, m);
                    })
                .aggregateTypes(type)
                .maxAttempts(3)
                .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(300))
                .heldRetryInterval(Duration.ofMillis(200))
                .pollTimeout(Duration.ofMillis(100))
                .build()
                .start()) {

      await(
          Duration.ofSeconds(60),
          "a and b applied, both failing messages parked",
          () -> applications(consumerName).size() == 4 && parked(consumer).size() == 2);

      // Later events still reach the handler: the polling thread is alive.
      append(type, List.of("a", "b"), type + "-3");
      await(
          Duration.ofSeconds(60),
          "a#3 and b#3 applied",
          () -> applications(consumerName).size() == 6);

      List<ParkedMessage> parked = parked(consumer);
      assertThat(parked)
          .extracting(p -> p.message().aggregateId())
          .containsExactlyInAnyOrder("asserting", "deep");
      assertThat(parked).allSatisfy(p -> assertThat(p.attempts()).isEqualTo(3));
      assertThat(lastErrorOf(parked, "asserting"))
          .isEqualTo("AssertionError: the handler's own check failed");
      assertThat(lastErrorOf(parked, "deep")).startsWith("StackOverflowError");
      // Their aggregates' second events wait behind them.
      assertThat(consumer.held(10))
          .extracting(h -> h.message().aggregateId() + "#" + h.message().sequence())
          .containsExactlyInAnyOrder("asserting#2", "deep#2");
    }
    // The failing messages were never applied, nor their aggregates' later ones.
    assertThat(appliedOrder(consumerName)).doesNotContainKeys("asserting", "deep");
    assertThat(appliedOrder(consumerName).get("a")).containsExactly(1L, 2L, 3L);
    assertThat(appliedOrder(consumerName).get("b")).containsExactly(1L, 2L, 3L);
    assertThat(applications(consumerName).values()).containsOnly(1);
  }

  private static String lastErrorOf(List<ParkedMessage> parked, String aggregateId) {
    return parked.stream()
        .filter(p -> p.message().aggregateId().equals(aggregateId))
        .findFirst()
        .orElseThrow()
        .lastError();
  }

  private static List<ParkedMessage> parked(KafkaEventConsumer consumer) {
    try {
      return consumer.inbox().parked(10);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int recurse(EventEnvelope m) {
    return recurse(m) + 1;
  }
}
