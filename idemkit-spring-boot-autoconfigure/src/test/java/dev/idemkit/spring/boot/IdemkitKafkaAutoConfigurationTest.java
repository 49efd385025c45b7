package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.micrometer.KafkaConsumerMetrics;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

class IdemkitKafkaAutoConfigurationTest {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 4);
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  /** What an {@link OutboxListener} bean was told about consumers: "consumer event count" lines. */
  static final class RecordingListener implements OutboxListener {
    final List<String> heard = new CopyOnWriteArrayList<>();

    @Override
    public void consumed(String consumer, int count) {
      heard.add(consumer + " consumed " + count);
    }

    @Override
    public void duplicatesSkipped(String consumer, int count) {
      heard.add(consumer + " duplicatesSkipped " + count);
    }
  }

  // No broker answers at 127.0.0.1:1: a consumer's start waits this long for its topics' retention,
  // then assumes the redelivery horizon (KafkaConsumersRetentionIT checks it on a real broker).
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemkitKafkaAutoConfiguration.class))
          .withPropertyValues("idemkit.events.kafka.retention-check-timeout=PT0.2S");

  @Test
  void withoutBootstrapServersNothingKafkaIsWiredAndTheEmbeddedTransportStays() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(EventTransport.class);
          assertThat(context).doesNotHaveBean(KafkaConsumers.class);
        });
  }

  @Test
  void bootstrapServersMakeTheRelaysTransportKafka() {
    runner
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=127.0.0.1:1",
            "idemkit.events.kafka.redelivery-horizon=P3D",
            "idemkit.events.kafka.producer.linger.ms=1")
        .run(
            context -> {
              assertThat(context).hasSingleBean(EventTransport.class);
              assertThat(context.getBean(EventTransport.class)).isInstanceOf(KafkaTransport.class);
              assertThat(context.getBean(EventTransport.class).redeliveryHorizon())
                  .isEqualTo(Duration.ofDays(3));
            });
  }

  @Test
  void settingsThatWouldLoseAcknowledgedEventsAreRefused() {
    runner
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=127.0.0.1:1",
            "idemkit.events.kafka.producer.acks=1")
        .run(context -> assertThat(context).hasFailed());
  }

  /**
   * Consumer settings Kafka would refuse, and the ones the inbox's guarantees rest on, stop
   * start-up with the property's name, as producer settings do, instead of killing a consumer's
   * polling thread (or warning for ever) after the application started.
   */
  @Test
  void badConsumerSettingsAndTopicNamesStopStartUpNamingTheProperty() {
    assertStartUpFailsNaming(
        "idemkit.events.kafka.consumer.max.poll.records=abc",
        "idemkit.events.kafka.consumer.max.poll.records");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.consumer.group.id=shared", "idemkit.events.kafka.consumer.group.id");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.consumer.auto.offset.reset=latest",
        "idemkit.events.kafka.consumer.auto.offset.reset");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.topics.widget=", "idemkit.events.kafka.topics.widget");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.topics.widget=bad topic!", "idemkit.events.kafka.topics.widget");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.retention-check-timeout=0s",
        "idemkit.events.kafka.retention-check-timeout");
  }

  /**
   * A transactional producer would refuse every send the transport makes outside a transaction, and
   * a partitioner ignoring the keys would split aggregates over partitions: the start-up fails
   * naming the property, as for the settings that would lose acknowledged events.
   */
  @Test
  void producerSettingsTheTransportCannotWorkWithStopStartUpNamingTheProperty() {
    assertStartUpFailsNaming(
        "idemkit.events.kafka.producer.transactional.id=relay-1",
        "idemkit.events.kafka.producer.transactional.id");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.producer.acks=1", "idemkit.events.kafka.producer.acks");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.producer.partitioner.ignore.keys=true",
        "idemkit.events.kafka.producer.partitioner.ignore.keys");
  }

  /** A producer value Kafka would refuse fails start-up naming the property and the value. */
  @Test
  void badProducerValuesStopStartUpNamingThePropertyAndTheValue() {
    assertStartUpFailsNaming(
        "idemkit.events.kafka.producer.compression.type=zip",
        "idemkit.events.kafka.producer.compression.type: invalid producer setting"
            + " compression.type=zip");
    assertStartUpFailsNaming(
        "idemkit.events.kafka.producer.linger.ms=soon",
        "idemkit.events.kafka.producer.linger.ms: invalid producer setting linger.ms=soon");
  }

  @Test
  void validConsumerSettingsAndTopicNamesStart() {
    runner
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=127.0.0.1:1",
            "idemkit.events.kafka.consumer.max.poll.records=50",
            "idemkit.events.kafka.consumer.auto.offset.reset=earliest",
            "idemkit.events.kafka.topics.widget=shop.widgets_v2")
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(KafkaConsumers.class));
  }

  private void assertStartUpFailsNaming(String setting, String property) {
    runner
        .withPropertyValues("idemkit.events.kafka.bootstrap-servers=127.0.0.1:1", setting)
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .run(
            context -> {
              assertThat(context).as(setting).hasFailed();
              assertThat(context.getStartupFailure()).as(setting).rootCause().isNotNull();
              assertThat(messages(context.getStartupFailure())).as(setting).contains(property);
            });
  }

  private static String messages(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.append(c.getMessage()).append('\n');
    }
    return all.toString();
  }

  @Test
  void kafkaConsumerMetricsComeWithAMeterRegistryOnly() {
    ApplicationContextRunner withMetrics =
        runner
            .withConfiguration(AutoConfigurations.of(IdemkitKafkaMetricsAutoConfiguration.class))
            .withPropertyValues("idemkit.events.kafka.bootstrap-servers=127.0.0.1:1");
    withMetrics
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> assertThat(context).hasSingleBean(KafkaConsumerMetrics.class));
    withMetrics.run(context -> assertThat(context).doesNotHaveBean(KafkaConsumerMetrics.class));
  }

  @Test
  void anApplicationsOwnTransportWins() {
    runner
        .withPropertyValues("idemkit.events.kafka.bootstrap-servers=127.0.0.1:1")
        .withBean(
            "myTransport",
            EventTransport.class,
            () -> dev.idemkit.outbox.EmbeddedTransport.create())
        .run(
            context ->
                assertThat(context.getBean(EventTransport.class))
                    .isNotInstanceOf(KafkaTransport.class));
  }

  @Test
  void withoutTheKafkaModuleThePropertyChangesNothing() {
    runner
        .withClassLoader(new FilteredClassLoader(KafkaTransport.class))
        .withPropertyValues("idemkit.events.kafka.bootstrap-servers=127.0.0.1:1")
        .run(context -> assertThat(context).doesNotHaveBean(EventTransport.class));
  }

  /**
   * The Kafka consumers' inboxes report to the application's outbox listener beans (its meters),
   * every one of them, as the inboxes on the embedded transport do.
   */
  @Test
  void theKafkaConsumersInboxesReportToTheOutboxListenerBeans() {
    RecordingListener meters = new RecordingListener();
    RecordingListener another = new RecordingListener();
    runner
        .withPropertyValues("idemkit.events.kafka.bootstrap-servers=127.0.0.1:1")
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .withBean("meters", OutboxListener.class, () -> meters)
        .withBean("another", OutboxListener.class, () -> another)
        .run(
            context -> {
              KafkaEventConsumer consumer =
                  context.getBean(KafkaConsumers.class).start("ledger", (tx, m) -> {}, "payment");
              EventEnvelope paid =
                  new EventEnvelope(
                      UUID.randomUUID(),
                      "PaymentCompleted",
                      "tenant-a",
                      "payment",
                      "p-1",
                      1,
                      Instant.now(),
                      "{}");

              assertThat(consumer.inbox().receive(paid)).isEqualTo(Received.APPLIED);
              assertThat(consumer.inbox().receive(paid)).isEqualTo(Received.DUPLICATE);
              assertThat(meters.heard)
                  .containsExactly("ledger consumed 1", "ledger duplicatesSkipped 1");
              assertThat(another.heard).isEqualTo(meters.heard);
            });
  }

  /**
   * A consumer that applied an aggregate's events 1 to 4 on the embedded transport (not in
   * sequence, so no sequence record) and moves to Kafka, where only event 5 comes: started with
   * {@code consumers.<name>.first-sequence=first-seen} it applies 5 (and then 6 in sequence); left
   * at the default it holds 5 for ever, applying nothing.
   */
  @Test
  void aConsumerMovedFromTheEmbeddedTransportCanStartAtTheFirstEventItSees() {
    String moved = "shipping-" + UUID.randomUUID().toString().substring(0, 8);
    String stayed = "shipping-" + UUID.randomUUID().toString().substring(0, 8);
    List<EventEnvelope> a1 = new java.util.ArrayList<>();
    for (long seq = 1; seq <= 6; seq++) {
      a1.add(
          new EventEnvelope(
              UUID.randomUUID(),
              "Shipped",
              "tenant-a",
              "order",
              "a1-" + moved,
              seq,
              Instant.now(),
              "{}"));
    }
    for (String name : List.of(moved, stayed)) {
      dev.idemkit.outbox.InboxConsumer embedded =
          dev.idemkit.outbox.InboxConsumer.builder(name, database.dataSource(), (tx, m) -> {})
              .redeliveryHorizon(Duration.ofDays(1))
              .build();
      assertThat(embedded.receive(a1.subList(0, 4))).containsOnly(Received.APPLIED);
    }
    List<Long> appliedByMoved = new CopyOnWriteArrayList<>();
    List<Long> appliedByStayed = new CopyOnWriteArrayList<>();
    runner
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=127.0.0.1:1",
            "idemkit.events.kafka.consumers." + moved + ".first-sequence=first-seen")
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .run(
            context -> {
              KafkaConsumers consumers = context.getBean(KafkaConsumers.class);
              KafkaEventConsumer onKafka =
                  consumers.start(moved, (tx, m) -> appliedByMoved.add(m.sequence()), "order");
              KafkaEventConsumer defaulted =
                  consumers.start(stayed, (tx, m) -> appliedByStayed.add(m.sequence()), "order");

              assertThat(onKafka.inbox().receive(a1.get(4))).isEqualTo(Received.APPLIED);
              assertThat(onKafka.inbox().receive(a1.get(5))).isEqualTo(Received.APPLIED);
              assertThat(defaulted.inbox().receive(a1.get(4))).isEqualTo(Received.HELD);
              assertThat(defaulted.inbox().releaseHeld()).isZero();
            });
    assertThat(appliedByMoved).containsExactly(5L, 6L);
    assertThat(appliedByStayed).isEmpty();
  }

  /**
   * The inbox cleanup covers the Kafka consumers the starter starts, with their retention from
   * {@code idemkit.events.kafka.inbox-retention}: an id applied five days ago goes after a
   * retention of four, one applied three and a half days ago stays.
   */
  @Test
  void theInboxCleanupForgetsTheKafkaConsumersIdsAfterTheirRetention() {
    runner
        .withConfiguration(AutoConfigurations.of(IdemkitInboxAutoConfiguration.class))
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=127.0.0.1:1",
            "idemkit.events.kafka.redelivery-horizon=P3D",
            "idemkit.events.kafka.inbox-retention=P4D")
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .run(
            context -> {
              KafkaEventConsumer consumer =
                  context.getBean(KafkaConsumers.class).start("receipts", (tx, m) -> {}, "payment");
              EventEnvelope older = envelope("p-old");
              EventEnvelope newer = envelope("p-new");
              assertThat(consumer.inbox().receive(List.of(older, newer)))
                  .containsOnly(Received.APPLIED);
              JdbcTemplate jdbc = new JdbcTemplate(database.dataSource());
              String age =
                  "update idemkit_inbox set processed_at = now() - ?::interval"
                      + " where consumer_name = 'receipts' and message_id = ?";
              jdbc.update(age, "5 days", older.eventId());
              jdbc.update(age, "84 hours", newer.eventId());

              context.getBean(InboxCleanupWorker.class).cleanUpOnce();

              assertThat(
                      jdbc.queryForList(
                          "select message_id from idemkit_inbox where consumer_name = 'receipts'",
                          UUID.class))
                  .containsExactly(newer.eventId());
            });
  }

  private static EventEnvelope envelope(String paymentId) {
    return new EventEnvelope(
        UUID.randomUUID(),
        "PaymentCompleted",
        "tenant-a",
        "payment",
        paymentId,
        1,
        Instant.now(),
        "{}");
  }
}
