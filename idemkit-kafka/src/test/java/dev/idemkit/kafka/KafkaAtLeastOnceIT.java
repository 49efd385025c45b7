package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.count;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.OutboxRelay;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Something that throws after the inbox answered a batch (a listener breaking its "must not throw"
 * contract, a call on the Kafka client) must not let the next commit move past a message the inbox
 * answered FAILED: the batch's records are read again, and in the end every event is applied once
 * and the group's offset is at the end of the topic.
 */
class KafkaAtLeastOnceIT {

  @Test
  void aListenerThatThrowsLosesNoEvent() throws Exception {
    String type = unique("wallet");
    String consumerName = unique("ledger");
    String topic = "idemkit.events." + type;
    broker().createTopic(topic, 1); // one partition: the whole topic comes in one poll
    // A record that is no Idemkit event first, so the listener's unreadable() is called too.
    try (var producer =
        new KafkaProducer<>(
            Map.<String, Object>of("bootstrap.servers", broker().bootstrapServers()),
            new StringSerializer(),
            new StringSerializer())) {
      producer.send(new ProducerRecord<>(topic, "stray", "not an event")).get(30, TimeUnit.SECONDS);
    }
    List<EventEnvelope> events = relayed(type, List.of("a", "b", "c"));

    AtomicInteger thrown = new AtomicInteger();
    KafkaConsumerListener throwing =
        new KafkaConsumerListener() {
          @Override
          public void applied(String consumer, List<EventEnvelope> messages) {
            thrown.incrementAndGet();
            throw new IllegalStateException("listener broken (applied)");
          }

          @Override
          public void unreadable(String consumer, int count) {
            thrown.incrementAndGet();
            throw new IllegalStateException("listener broken (unreadable)");
          }

          @Override
          public void partitionRetried(String consumer) {
            thrown.incrementAndGet();
            throw new IllegalStateException("listener broken (partitionRetried)");
          }
        };
    try (KafkaEventConsumer consumer =
        KafkaEventConsumer.builder(
                broker().bootstrapServers(),
                consumerName,
                Fixture.ds(),
                failingFirstDelivery(consumerName, "b", 1))
            .aggregateTypes(type)
            .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(500))
            .heldRetryInterval(Duration.ofMillis(200))
            .pollTimeout(Duration.ofMillis(100))
            .kafkaListener(throwing)
            .build()
            .start()) {
      awaitAllAppliedOnce(consumerName, events);
      awaitCommittedToEnd(consumerName, topic);
    }
    assertThat(thrown.get()).as("the listener threw").isPositive();
  }

  @Test
  void aClientCallThatThrowsAfterTheInboxAnsweredLosesNoEvent() throws Exception {
    String type = unique("purse");
    String consumerName = unique("ledger");
    String topic = "idemkit.events." + type;
    broker().createTopic(topic, 1);
    List<EventEnvelope> events = relayed(type, List.of("a", "b", "c"));

    // The real client, whose first seek (sending the partition back to b#1, which failed) throws:
    // the round ends after the inbox applied a and c, before any commit.
    AtomicBoolean seekFailed = new AtomicBoolean();
    try (KafkaEventConsumer consumer =
        KafkaEventConsumer.builder(
                broker().bootstrapServers(),
                consumerName,
                Fixture.ds(),
                failingFirstDelivery(consumerName, "b", 1))
            .aggregateTypes(type)
            .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(500))
            .heldRetryInterval(Duration.ofMillis(200))
            .pollTimeout(Duration.ofMillis(100))
            .clientWrapper(c -> failingFirstSeek(c, seekFailed))
            .build()
            .start()) {
      awaitAllAppliedOnce(consumerName, events);
      awaitCommittedToEnd(consumerName, topic);
    }
    assertThat(seekFailed).isTrue();
  }

  /** Two events each of these aggregates, on the topic (relayed) before any consumer starts. */
  private static List<EventEnvelope> relayed(String type, List<String> aggregates)
      throws Exception {
    List<EventEnvelope> events = new ArrayList<>();
    events.addAll(append(type, aggregates, type + "-1"));
    events.addAll(append(type, aggregates, type + "-2"));
    try (KafkaTransport transport = Fixture.transport(broker().bootstrapServers());
        OutboxRelay relay = Fixture.relay(transport).build().start()) {
      await(
          Duration.ofSeconds(60),
          "the events sent",
          () ->
              count(
                      "select count(*) from idemkit_outbox where aggregate_type = '"
                          + type
                          + "' and sent_at is null")
                  == 0);
    }
    return events;
  }

  /**
   * The ledger, but {@code aggregateId}#{@code sequence} throws the first two times: in the batch,
   * then on its own (the inbox tries a batch's failed message once more alone), so the inbox
   * answers FAILED for it in the first delivery and applies it in a later one.
   */
  private static MessageHandler failingFirstDelivery(
      String consumer, String aggregateId, long sequence) {
    MessageHandler ledger = Fixture.ledger(consumer);
    AtomicInteger calls = new AtomicInteger();
    return (tx, m) -> {
      if (m.aggregateId().equals(aggregateId)
          && m.sequence() == sequence
          && calls.incrementAndGet() <= 2) {
        throw new IllegalStateException("fails in its first delivery");
      }
      ledger.apply(tx, m);
    };
  }

  @SuppressWarnings("unchecked")
  private static Consumer<String, String> failingFirstSeek(
      Consumer<String, String> real, AtomicBoolean failed) {
    return (Consumer<String, String>)
        Proxy.newProxyInstance(
            KafkaAtLeastOnceIT.class.getClassLoader(),
            new Class<?>[] {Consumer.class},
            (proxy, method, args) -> {
              if (method.getName().equals("seek") && failed.compareAndSet(false, true)) {
                throw new IllegalStateException("seek failed (injected)");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private static void awaitAllAppliedOnce(String consumer, List<EventEnvelope> events)
      throws InterruptedException {
    Set<UUID> ids = events.stream().map(EventEnvelope::eventId).collect(Collectors.toSet());
    await(
        Duration.ofSeconds(60),
        events.size() + " events applied by " + consumer,
        () -> applications(consumer).keySet().equals(ids));
    assertThat(applications(consumer).values()).containsOnly(1);
  }

  private static void awaitCommittedToEnd(String group, String topic) throws Exception {
    TopicPartition p = new TopicPartition(topic, 0);
    try (Admin admin = broker().admin()) {
      long end =
          admin.listOffsets(Map.of(p, OffsetSpec.latest())).partitionResult(p).get().offset();
      await(
          Duration.ofSeconds(30),
          "the group's offset at the end of " + topic + " (" + end + ")",
          () -> {
            try {
              OffsetAndMetadata committed =
                  admin
                      .listConsumerGroupOffsets(group)
                      .partitionsToOffsetAndMetadata()
                      .get(30, TimeUnit.SECONDS)
                      .get(p);
              return committed != null && committed.offset() == end;
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
    }
  }
}
