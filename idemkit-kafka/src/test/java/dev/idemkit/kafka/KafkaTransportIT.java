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
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

class KafkaTransportIT {

  @Test
  void eventsTravelKeyedByTheirAggregateWithTheEnvelopeAsHeadersAndAreAppliedOnceInOrder()
      throws Exception {
    String type = unique("order");
    String consumerName = unique("ledger");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 3);
    List<String> aggregates = List.of("o1", "o2", "o3", "o4", "o5");
    List<EventEnvelope> appended = new ArrayList<>();
    for (int round = 1; round <= 4; round++) {
      appended.addAll(append(type, aggregates, "step" + round));
    }

    try (KafkaTransport transport = Fixture.transport(bootstrap);
        OutboxRelay relay = Fixture.relay(transport).build().start();
        KafkaEventConsumer consumer =
            Fixture.consumer(bootstrap, consumerName, type).build().start()) {
      await(Duration.ofSeconds(60), "20 applied", () -> applications(consumerName).size() == 20);
    }

    assertThat(applications(consumerName).values()).containsOnly(1);
    assertThat(appliedOrder(consumerName).values())
        .allSatisfy(seqs -> assertThat(seqs).containsExactly(1L, 2L, 3L, 4L));

    // On the topic: key = aggregate id, value = payload, headers = the envelope.
    List<ConsumerRecord<String, String>> records =
        readTopic(bootstrap, "idemkit.events." + type, 20);
    Map<String, Integer> partitionOf = new HashMap<>();
    for (ConsumerRecord<String, String> r : records) {
      Map<String, String> h = headers(r);
      EventEnvelope e = EventEnvelope.fromHeaders(h, r.value());
      assertThat(appended)
          .filteredOn(a -> a.eventId().equals(e.eventId()))
          .singleElement()
          .satisfies(
              a -> {
                assertThat(e.aggregateId()).isEqualTo(a.aggregateId());
                assertThat(e.sequence()).isEqualTo(a.sequence());
                assertThat(e.tenant()).isEqualTo(a.tenant());
                assertThat(e.type()).isEqualTo(a.type());
                assertThat(e.payload()).isEqualTo(a.payload());
              });
      assertThat(r.key()).isEqualTo(e.aggregateId());
      assertThat(h)
          .containsKeys(
              EventEnvelope.HEADER_EVENT_ID,
              EventEnvelope.HEADER_TYPE,
              EventEnvelope.HEADER_TENANT,
              EventEnvelope.HEADER_SEQUENCE);
      // One aggregate, one partition.
      assertThat(partitionOf.computeIfAbsent(r.key(), k -> r.partition())).isEqualTo(r.partition());
    }
  }

  @Test
  void aPoisonMessageIsParkedWithoutBlockingItsPartitionAndItsAggregateWaitsForTheRequeue()
      throws Exception {
    String type = unique("invoice");
    String consumerName = unique("ledger");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 1); // everybody shares one partition
    AtomicBoolean poisonFixed = new AtomicBoolean(false);
    var ledger = Fixture.ledger(consumerName);

    append(type, List.of("poison", "a", "b"), "1");
    append(type, List.of("poison", "a", "b"), "2");
    append(type, List.of("poison", "a", "b"), "3");

    try (KafkaTransport transport = Fixture.transport(bootstrap);
        OutboxRelay relay = Fixture.relay(transport).build().start();
        KafkaEventConsumer consumer =
            KafkaEventConsumer.builder(
                    bootstrap,
                    consumerName,
                    ds(),
                    (tx, m) -> {
                      if (m.aggregateId().equals("poison")
                          && m.sequence() == 1
                          && !poisonFixed.get()) {
                        throw new IllegalArgumentException("cannot parse " + m.payload());
                      }
                      ledger.apply(tx, m);
                    })
                .aggregateTypes(type)
                .maxAttempts(3)
                .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(300))
                .heldRetryInterval(Duration.ofMillis(200))
                .build()
                .start()) {

      // The other aggregates of the partition go through; the poison is parked after 3 attempts.
      await(
          Duration.ofSeconds(60),
          "a and b applied, poison parked",
          () ->
              applications(consumerName).size() == 6
                  && Fixture.count(
                          "select count(*) from idemkit_inbox where status = 'PARKED' and"
                              + " consumer_name = '"
                              + consumerName
                              + "'")
                      == 1);
      // The poison's later events are held behind the gap, never applied out of order.
      await(Duration.ofSeconds(30), "2 held", () -> heldCount(consumer) == 2);
      assertThat(consumer.held(10))
          .allSatisfy(
              h -> {
                assertThat(h.message().aggregateId()).isEqualTo("poison");
                assertThat(h.lastApplied()).isZero();
              })
          .extracting(h -> h.message().sequence())
          .containsExactlyInAnyOrder(2L, 3L);
      assertThat(appliedOrder(consumerName)).doesNotContainKey("poison");
      assertThat(consumer.inbox().parked(10)).hasSize(1);

      // The operator fixes the cause and re-queues it: 1, then the held 2 and 3, in order.
      poisonFixed.set(true);
      var parked = consumer.inbox().parked(10).get(0);
      assertThat(consumer.requeue(parked.message().eventId())).isEqualTo(Received.APPLIED);
      await(Duration.ofSeconds(30), "poison applied", () -> applications(consumerName).size() == 9);
    }
    assertThat(appliedOrder(consumerName).get("poison")).containsExactly(1L, 2L, 3L);
    assertThat(appliedOrder(consumerName).get("a")).containsExactly(1L, 2L, 3L);
    assertThat(applications(consumerName).values()).containsOnly(1);
  }

  private static long heldCount(KafkaEventConsumer consumer) {
    try {
      return consumer.heldSummary().count();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Map<String, String> headers(ConsumerRecord<String, String> r) {
    Map<String, String> h = new HashMap<>();
    for (Header header : r.headers()) {
      h.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
    }
    return h;
  }

  /** Every record of {@code topic} from the beginning, until {@code atLeast} were read. */
  static List<ConsumerRecord<String, String>> readTopic(
      String bootstrap, String topic, int atLeast) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, unique("reader"));
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    try (KafkaConsumer<String, String> c =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      long quietSince = System.nanoTime();
      while (System.nanoTime() < deadline) {
        var batch = c.poll(Duration.ofMillis(200));
        batch.forEach(out::add);
        if (!batch.isEmpty()) {
          quietSince = System.nanoTime();
        } else if (out.size() >= atLeast && System.nanoTime() - quietSince > 1_000_000_000L) {
          break;
        }
      }
    }
    return out;
  }
}
