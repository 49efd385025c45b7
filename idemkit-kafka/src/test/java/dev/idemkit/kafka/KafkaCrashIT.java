package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.appliedOrder;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.count;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.kafka.ChildProcesses.Child;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxRelay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** Relay and consumer processes killed with {@code kill -9} at the points that make duplicates. */
class KafkaCrashIT {

  @Test
  void aRelayKilledAfterTheBrokersAckAndBeforeItsMarkSendsTheEventTwiceAndItIsAppliedOnce()
      throws Exception {
    String type = unique("payment");
    String consumerName = unique("ledger");
    String topic = "idemkit.events." + type;
    String bootstrap = broker().bootstrapServers();
    broker().createTopic(topic, 2);
    EventEnvelope event = append(type, List.of("pay_1"), "completed").get(0);

    try (Child relay =
        new Child(ChildProcesses.StallingRelay.class, Fixture.jdbcUrl(), bootstrap)) {
      assertThat(relay.await("ACKED", Duration.ofSeconds(90)))
          .isEqualTo("ACKED " + event.eventId());
      relay.kill(); // the broker has it; the relay never marked it
    }
    assertThat(
            count(
                "select count(*) from idemkit_outbox where sent_at is null and event_id = '"
                    + event.eventId()
                    + "'"))
        .isEqualTo(1);

    try (KafkaTransport transport = Fixture.transport(bootstrap);
        OutboxRelay relay = Fixture.relay(transport).build().start();
        KafkaEventConsumer consumer =
            Fixture.consumer(bootstrap, consumerName, type).build().start()) {
      await(
          Duration.ofSeconds(60),
          "the event sent again and marked",
          () ->
              count(
                      "select count(*) from idemkit_outbox where sent_at is not null and"
                          + " event_id = '"
                          + event.eventId()
                          + "'")
                  == 1);
      await(Duration.ofSeconds(60), "applied", () -> applications(consumerName).size() == 1);
      // Give the second copy time to arrive and be skipped.
      await(
          Duration.ofSeconds(60),
          "both copies consumed",
          () ->
              count(
                          "select count(*) from idemkit_inbox where consumer_name = '"
                              + consumerName
                              + "'")
                      == 1
                  && KafkaTransportIT.readTopic(bootstrap, topic, 2).size() == 2);
      Thread.sleep(500);
    }
    List<ConsumerRecord<String, String>> onTopic = KafkaTransportIT.readTopic(bootstrap, topic, 2);
    assertThat(onTopic)
        .hasSize(2)
        .allSatisfy(
            r ->
                assertThat(KafkaTransportIT.headers(r).get(EventEnvelope.HEADER_EVENT_ID))
                    .isEqualTo(event.eventId().toString()));
    assertThat(applications(consumerName)).containsExactly(java.util.Map.entry(event.eventId(), 1));
  }

  @Test
  void aConsumerOfAGroupOfTwoKilledMidBatchLosesNothingAndAppliesNothingTwice() throws Exception {
    String type = unique("account");
    String consumerName = unique("ledger");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 4);
    List<String> aggregates = IntStream.range(0, 40).mapToObj(i -> "acc" + i).toList();
    List<EventEnvelope> appended = new ArrayList<>();
    for (int round = 1; round <= 15; round++) {
      appended.addAll(append(type, aggregates, "r" + round));
    }
    // 600 events on the topic before either consumer starts.
    try (KafkaTransport transport = Fixture.transport(bootstrap);
        OutboxRelay relay = Fixture.relay(transport).build().start()) {
      await(
          Duration.ofSeconds(90),
          "all sent",
          () ->
              count(
                      "select count(*) from idemkit_outbox where sent_at is null and"
                          + " aggregate_type = '"
                          + type
                          + "'")
                  == 0);
    }

    try (Child victim =
        new Child(
            ChildProcesses.SlowConsumer.class, Fixture.jdbcUrl(), bootstrap, consumerName, type)) {
      victim.await("CONSUMER STARTED", Duration.ofSeconds(60));
      victim.await("APPLIED", Duration.ofSeconds(90));
      // The second member joins; the group rebalances and the victim keeps part of the partitions.
      try (KafkaEventConsumer survivor =
          Fixture.consumer(bootstrap, consumerName, type).build().start()) {
        for (int i = 0; i < 150; i++) {
          victim.await("APPLIED", Duration.ofSeconds(90));
        }
        // Killed inside a batch: its handler is running, the batch's transaction is open and the
        // partitions' offsets stand where its last committed batch ended.
        victim.kill();
        await(
            Duration.ofSeconds(120),
            "all 600 applied",
            () -> applications(consumerName).size() == appended.size());
      }
    }
    assertThat(applications(consumerName).keySet())
        .containsExactlyInAnyOrderElementsOf(
            appended.stream().map(EventEnvelope::eventId).toList());
    assertThat(applications(consumerName).values()).containsOnly(1);
    assertThat(appliedOrder(consumerName).values())
        .allSatisfy(
            seqs ->
                assertThat(seqs)
                    .containsExactlyElementsOf(
                        IntStream.rangeClosed(1, 15).mapToObj(i -> (long) i).toList()));
  }
}
