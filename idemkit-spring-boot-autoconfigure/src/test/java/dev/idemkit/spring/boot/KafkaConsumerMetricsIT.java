package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.micrometer.KafkaConsumerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.Properties;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * With a {@link MeterRegistry}, the consumers the starter starts report to {@link
 * KafkaConsumerMetrics}: a record on a consumer's topic that is not an Idemkit event (no envelope
 * headers) shows in {@value KafkaConsumerMetrics#UNREADABLE}, tagged with the consumer, and the
 * consumer's held messages are the gauge {@value KafkaConsumerMetrics#HELD}.
 */
class KafkaConsumerMetricsIT {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;
  private static KafkaBroker broker;

  @BeforeAll
  static void start() {
    database = IdemkitDatabase.embedded(dataDir, 4);
    broker = KafkaBroker.start(1);
  }

  @AfterAll
  static void stop() {
    broker.close();
    database.close();
  }

  /** The application's wiring: one consumer, started as a bean (docs/events.md). */
  @Configuration(proxyBeanMethods = false)
  static class Wiring {
    @Bean
    KafkaEventConsumer audit(KafkaConsumers kafka, Environment env) {
      return kafka.start(
          env.getRequiredProperty("test.consumer"),
          (tx, m) -> {},
          env.getRequiredProperty("test.aggregate-type"));
    }
  }

  @Test
  void theStartedConsumersReportToTheMeterRegistry() throws Exception {
    String type = "audit-" + UUID.randomUUID().toString().substring(0, 8);
    String consumer = "archive-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = "idemkit.events." + type;
    broker.createTopic(topic, 1);
    sendPlainRecords(topic, 2);

    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                IdemkitKafkaAutoConfiguration.class, IdemkitKafkaMetricsAutoConfiguration.class))
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withUserConfiguration(Wiring.class)
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=" + broker.bootstrapServers(),
            "idemkit.events.kafka.consumer.session.timeout.ms=6000",
            "idemkit.events.kafka.consumer.heartbeat.interval.ms=1000",
            "test.consumer=" + consumer,
            "test.aggregate-type=" + type)
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(KafkaConsumerMetrics.class);
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              long deadline = System.nanoTime() + 60_000_000_000L;
              while (unreadable(registry, consumer) < 2 && System.nanoTime() < deadline) {
                Thread.sleep(50);
              }
              assertThat(unreadable(registry, consumer)).isEqualTo(2.0);
              // The consumer is monitored: its held messages are a gauge (none held).
              Gauge held =
                  registry.find(KafkaConsumerMetrics.HELD).tag("consumer", consumer).gauge();
              assertThat(held)
                  .as("gauge %s of %s", KafkaConsumerMetrics.HELD, consumer)
                  .isNotNull();
              assertThat(held.value()).isZero();
            });
  }

  private static double unreadable(MeterRegistry registry, String consumer) {
    Counter c = registry.find(KafkaConsumerMetrics.UNREADABLE).tag("consumer", consumer).counter();
    return c == null ? 0 : c.count();
  }

  /** Records without Idemkit's envelope headers: the consumer skips and counts them. */
  private static void sendPlainRecords(String topic, int n) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < n; i++) {
        producer.send(new ProducerRecord<>(topic, "k" + i, "not an event")).get();
      }
    }
  }
}
