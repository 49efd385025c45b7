package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.appliedOrder;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.OutboxRelay;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** 10,000 events over 200 aggregates, two relays and two consumers: every aggregate in order. */
class KafkaOrderingIT {

  @Test
  void twoRelaysAndTwoConsumersApplyEveryAggregatesEventsInSequence() throws Exception {
    String type = unique("ledger-account");
    String consumerName = unique("ledger");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 4);
    List<String> aggregates = IntStream.range(0, 200).mapToObj(i -> "agg" + i).toList();
    int rounds = 50;

    try (KafkaTransport t1 = Fixture.transport(bootstrap);
        KafkaTransport t2 = Fixture.transport(bootstrap);
        OutboxRelay relay1 = Fixture.relay(t1).build().start();
        OutboxRelay relay2 = Fixture.relay(t2).build().start();
        KafkaEventConsumer c1 = Fixture.consumer(bootstrap, consumerName, type).build().start();
        KafkaEventConsumer c2 = Fixture.consumer(bootstrap, consumerName, type).build().start()) {
      // Written while both relays and both consumers run: each round appends one event to every
      // aggregate, in transactions of 100.
      for (int round = 1; round <= rounds; round++) {
        append(type, aggregates.subList(0, 100), "r" + round);
        append(type, aggregates.subList(100, 200), "r" + round);
      }
      await(
          Duration.ofSeconds(150),
          "10,000 applied",
          () -> applications(consumerName).size() == aggregates.size() * rounds);
    }
    assertThat(applications(consumerName).values()).containsOnly(1);
    List<Long> inSequence = IntStream.rangeClosed(1, rounds).mapToObj(i -> (long) i).toList();
    assertThat(appliedOrder(consumerName)).hasSize(200);
    assertThat(appliedOrder(consumerName).values())
        .allSatisfy(seqs -> assertThat(seqs).containsExactlyElementsOf(inSequence));
  }
}
