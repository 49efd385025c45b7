package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
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

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemkitKafkaAutoConfiguration.class));

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
}
