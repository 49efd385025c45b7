package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.count;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxRelay;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/**
 * The consumer's start reads its topics' retention from a real broker: a topic that keeps records
 * at least as long as the inbox remembers ids (here 30 days against the default 14, while the
 * configured redelivery horizon still says 7) refuses the consumer, which then reads nothing; one
 * that keeps them for less starts and applies; a topic that keeps them for ever is refused unless
 * accepted. The events are on the topic before the consumer tries to start.
 */
class KafkaRetentionCheckIT {

  private static final String DAYS_30 = Long.toString(Duration.ofDays(30).toMillis());
  private static final String DAYS_3 = Long.toString(Duration.ofDays(3).toMillis());

  @Test
  void aTopicKeepingRecordsLongerThanTheInboxRemembersRefusesTheConsumerWhichReadsNothing()
      throws Exception {
    String longType = unique("invoice");
    String shortType = unique("receipt");
    String name = unique("billing");
    broker().createTopic(topic(longType), 2, Map.of("retention.ms", DAYS_30));
    broker().createTopic(topic(shortType), 2, Map.of("retention.ms", DAYS_3));
    List<EventEnvelope> events = publish(longType, shortType);

    KafkaEventConsumer refused =
        Fixture.consumer(broker().bootstrapServers(), name, longType)
            .aggregateTypes(shortType)
            .build(); // inbox retention 14 days, configured horizon 7 days: the build passes
    assertThatThrownBy(refused::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Kafka consumer " + name + " refuses to start")
        .hasMessageContaining("topic " + topic(longType) + " keeps records for 30 days")
        .hasMessageContaining("retention.ms=" + DAYS_30)
        .hasMessageContaining("after 14 days (inbox retention)")
        .hasMessageContaining("KafkaEventConsumer.Builder.inboxRetention")
        .hasMessageContaining("idemkit.events.kafka.inbox-retention")
        .hasMessageNotContaining(topic(shortType));

    // Refused means not started: no member ever joined the group, nothing is applied or committed.
    Thread.sleep(1_000);
    assertThat(applications(name)).isEmpty();
    assertThat(committedOffsets(name)).isEmpty();

    // The same consumer with an inbox that outlives the topic starts and applies what is there.
    try (KafkaEventConsumer started =
        Fixture.consumer(broker().bootstrapServers(), name, longType)
            .aggregateTypes(shortType)
            .inboxRetention(Duration.ofDays(31))
            .build()
            .start()) {
      awaitAllApplied(name, events);
    }
  }

  @Test
  void aTopicKeepingRecordsForLessThanTheInboxRetentionStartsAndConsumes() throws Exception {
    String type = unique("receipt");
    String name = unique("mailer");
    broker().createTopic(topic(type), 2, Map.of("retention.ms", DAYS_3));
    List<EventEnvelope> events = publish(type);

    try (KafkaEventConsumer consumer =
        Fixture.consumer(broker().bootstrapServers(), name, type).build().start()) {
      awaitAllApplied(name, events);
    }
  }

  @Test
  void aTopicKeepingRecordsForEverIsRefusedUnlessAccepted() throws Exception {
    String type = unique("audit");
    String name = unique("archive");
    broker().createTopic(topic(type), 2, Map.of("retention.ms", "-1"));
    List<EventEnvelope> events = publish(type);

    assertThatThrownBy(
            () ->
                Fixture.consumer(broker().bootstrapServers(), name, type)
                    .inboxRetention(Duration.ofDays(3650))
                    .build()
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("topic " + topic(type) + " keeps records for ever (retention.ms=-1)")
        .hasMessageContaining("KafkaEventConsumer.Builder.acceptUnboundedRetention(true)")
        .hasMessageContaining("idemkit.events.kafka.accept-unbounded-retention=true");
    Thread.sleep(1_000);
    assertThat(applications(name)).isEmpty();

    try (KafkaEventConsumer accepted =
        Fixture.consumer(broker().bootstrapServers(), name, type)
            .acceptUnboundedRetention(true)
            .build()
            .start()) {
      awaitAllApplied(name, events);
    }
  }

  @Test
  void aCompactedTopicCountsAsKeepingRecordsForEver() throws Exception {
    String type = unique("profile");
    String name = unique("directory");
    broker().createTopic(topic(type), 2, Map.of("cleanup.policy", "compact"));
    List<EventEnvelope> events = publish(type);

    assertThatThrownBy(
            () -> Fixture.consumer(broker().bootstrapServers(), name, type).build().start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "topic "
                + topic(type)
                + " keeps each key's latest record for ever"
                + " (cleanup.policy=compact)")
        .hasMessageContaining("acceptUnboundedRetention(true)");
    Thread.sleep(1_000);
    assertThat(applications(name)).isEmpty();

    try (KafkaEventConsumer accepted =
        Fixture.consumer(broker().bootstrapServers(), name, type)
            .acceptUnboundedRetention(true)
            .build()
            .start()) {
      awaitAllApplied(name, events);
    }
  }

  /**
   * A topic that does not exist yet gets the broker's default retention (here Kafka's, 7 days): an
   * inbox that remembers ids for 7 days is refused, one of 14 starts (the topic is then created on
   * first use) and consumes.
   */
  @Test
  void aTopicNotCreatedYetIsCheckedAgainstTheBrokersDefaultRetention() throws Exception {
    String type = unique("shipment");
    String name = unique("tracking");

    assertThatThrownBy(
            () ->
                Fixture.consumer(broker().bootstrapServers(), name, type)
                    .inboxRetention(Duration.ofDays(7))
                    .redeliveryHorizon(Duration.ofDays(6))
                    .build()
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("topic " + topic(type) + " keeps records for 7 days")
        .hasMessageContaining("not created yet: the broker's log.retention.");

    try (KafkaEventConsumer consumer =
        Fixture.consumer(broker().bootstrapServers(), name, type).build().start()) {
      List<EventEnvelope> events = publish(type);
      awaitAllApplied(name, events);
    }
  }

  /**
   * A cluster that does not answer holds the start up for the check's timeout only; the consumer
   * then assumes the configured horizon, says so, and starts (polling for the cluster as usual).
   */
  @Test
  void withTheClusterUnreachableTheConsumerStartsAfterTheTimeoutOnTheConfiguredHorizon()
      throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String type = unique("parcel");
    List<LogRecord> logged = new CopyOnWriteArrayList<>();
    Handler capture =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            logged.add(r);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    Logger log = Logger.getLogger(KafkaEventConsumer.class.getName());
    log.addHandler(capture);
    try {
      long started = System.nanoTime();
      try (KafkaEventConsumer consumer =
          Fixture.consumer("127.0.0.1:" + closedPort, unique("offline"), type)
              .retentionCheckTimeout(Duration.ofSeconds(1))
              .build()
              .start()) {
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      }
    } finally {
      log.removeHandler(capture);
    }
    assertThat(logged)
        .filteredOn(r -> r.getLevel() == Level.WARNING)
        .map(LogRecord::getMessage)
        .anySatisfy(
            m ->
                assertThat(m)
                    .contains("could not read the retention of topic " + topic(type))
                    .contains("no answer from the cluster within 1 s")
                    .contains("assuming the configured redelivery horizon, 7 days"));
  }

  private static String topic(String type) {
    return "idemkit.events." + type;
  }

  /** Appends three aggregates' events of each type and relays them onto their topics. */
  private static List<EventEnvelope> publish(String... types) throws Exception {
    List<EventEnvelope> events = new CopyOnWriteArrayList<>();
    for (String type : types) {
      // Event ids are named by the aggregate and the cause, not the type: ids of this test's own.
      List<String> aggregates = List.of(type + "-a1", type + "-a2", type + "-a3");
      events.addAll(append(type, aggregates, "first"));
      events.addAll(append(type, aggregates.subList(0, 2), "second"));
    }
    String typeList =
        List.of(types).stream().map(t -> "'" + t + "'").collect(Collectors.joining(", "));
    try (KafkaTransport transport = Fixture.transport(broker().bootstrapServers());
        OutboxRelay relay = Fixture.relay(transport).build().start()) {
      await(
          Duration.ofSeconds(60),
          "the events on their topics",
          () ->
              count(
                      "select count(*) from idemkit_outbox where sent_at is null"
                          + " and aggregate_type in ("
                          + typeList
                          + ")")
                  == 0);
    }
    return events;
  }

  private static void awaitAllApplied(String consumer, List<EventEnvelope> events)
      throws InterruptedException {
    Set<java.util.UUID> ids =
        events.stream().map(EventEnvelope::eventId).collect(Collectors.toSet());
    await(
        Duration.ofSeconds(60),
        events.size() + " applied by " + consumer,
        () -> applications(consumer).keySet().equals(ids));
    assertThat(applications(consumer).values()).containsOnly(1);
  }

  private static Map<?, ?> committedOffsets(String group) throws Exception {
    try (Admin admin = broker().admin()) {
      return admin
          .listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS);
    }
  }
}
