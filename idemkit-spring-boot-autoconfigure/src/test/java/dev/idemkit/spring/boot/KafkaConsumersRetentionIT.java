package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.spi.EventTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
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
 * The starter's path on a real broker: a consumer the application starts through {@link
 * KafkaConsumers} (as docs/events.md wires it) checks its topic's retention on the cluster. A topic
 * that keeps records for 30 days against the default inbox retention of 14 (the default redelivery
 * horizon still saying 7) stops the application, naming the topic and the property, and nothing is
 * applied; raising {@code idemkit.events.kafka.inbox-retention} above it starts it. A topic that
 * keeps records for less starts and consumes; one that keeps them for ever is refused unless {@code
 * idemkit.events.kafka.accept-unbounded-retention=true}.
 */
class KafkaConsumersRetentionIT {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;
  private static KafkaBroker broker;

  @BeforeAll
  static void start() {
    database = IdemkitDatabase.embedded(dataDir, 6);
    broker = KafkaBroker.start(2);
  }

  @AfterAll
  static void stop() {
    broker.close();
    database.close();
  }

  /** What the application's handler applied. */
  static final class Applied {
    final List<UUID> ids = new CopyOnWriteArrayList<>();
  }

  /** The application's wiring: one consumer, started as a bean (docs/events.md). */
  @Configuration(proxyBeanMethods = false)
  static class Wiring {
    @Bean
    KafkaEventConsumer billing(KafkaConsumers kafka, Applied applied, Environment env) {
      return kafka.start(
          env.getRequiredProperty("test.consumer"),
          (tx, m) -> applied.ids.add(m.eventId()),
          env.getRequiredProperty("test.aggregate-type"));
    }
  }

  private ApplicationContextRunner runner(String consumer, String type, Applied applied) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemkitKafkaAutoConfiguration.class))
        .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
        .withBean(Applied.class, () -> applied)
        .withUserConfiguration(Wiring.class)
        .withPropertyValues(
            "idemkit.events.kafka.bootstrap-servers=" + broker.bootstrapServers(),
            "idemkit.events.kafka.consumer.session.timeout.ms=6000",
            "idemkit.events.kafka.consumer.heartbeat.interval.ms=1000",
            "test.consumer=" + consumer,
            "test.aggregate-type=" + type);
  }

  @Test
  void aTopicKeepingRecordsLongerThanTheInboxRetentionStopsTheApplication() throws Exception {
    String type = unique("invoice");
    String consumer = unique("billing");
    broker.createTopic(
        "idemkit.events." + type,
        2,
        Map.of("retention.ms", Long.toString(Duration.ofDays(30).toMillis())));
    Applied applied = new Applied();
    List<UUID> sent = send(type, 3);

    runner(consumer, type, applied)
        .run(
            context -> {
              assertThat(context).hasFailed();
              Throwable refusal = context.getStartupFailure();
              while (refusal.getCause() != null) {
                refusal = refusal.getCause();
              }
              assertThat(refusal)
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessageContaining("Kafka consumer " + consumer + " refuses to start")
                  .hasMessageContaining(
                      "topic idemkit.events." + type + " keeps records for 30 days")
                  .hasMessageContaining("after 14 days (inbox retention)")
                  .hasMessageContaining("idemkit.events.kafka.inbox-retention");
            });
    Thread.sleep(1_000);
    assertThat(applied.ids).isEmpty();

    runner(consumer, type, applied)
        .withPropertyValues("idemkit.events.kafka.inbox-retention=P31D")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              awaitApplied(applied, sent);
            });
  }

  @Test
  void aTopicKeepingRecordsForLessThanTheInboxRetentionStartsAndConsumes() throws Exception {
    String type = unique("receipt");
    String consumer = unique("mailer");
    broker.createTopic(
        "idemkit.events." + type,
        2,
        Map.of("retention.ms", Long.toString(Duration.ofDays(3).toMillis())));
    Applied applied = new Applied();
    List<UUID> sent = send(type, 3);

    runner(consumer, type, applied)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              awaitApplied(applied, sent);
            });
  }

  @Test
  void aTopicKeepingRecordsForEverStopsTheApplicationUnlessAccepted() throws Exception {
    String type = unique("audit");
    String consumer = unique("archive");
    broker.createTopic("idemkit.events." + type, 2, Map.of("retention.ms", "-1"));
    Applied applied = new Applied();
    List<UUID> sent = send(type, 3);

    runner(consumer, type, applied)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(messages(context.getStartupFailure()))
                  .contains("topic idemkit.events." + type + " keeps records for ever")
                  .contains("idemkit.events.kafka.accept-unbounded-retention=true");
            });
    Thread.sleep(1_000);
    assertThat(applied.ids).isEmpty();

    runner(consumer, type, applied)
        .withPropertyValues("idemkit.events.kafka.accept-unbounded-retention=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              awaitApplied(applied, sent);
            });
  }

  /** Sends {@code n} events of one new aggregate (sequence 1 to n) onto the type's topic. */
  private static List<UUID> send(String type, int n) throws Exception {
    List<EventEnvelope> events = new ArrayList<>();
    for (long seq = 1; seq <= n; seq++) {
      events.add(
          new EventEnvelope(
              UUID.randomUUID(), "Recorded", "tenant-a", type, "a-1", seq, Instant.now(), "{}"));
    }
    try (EventTransport transport = KafkaTransport.builder(broker.bootstrapServers()).build()) {
      CompletableFuture.allOf(
              transport.send(events).stream()
                  .map(s -> s.toCompletableFuture())
                  .toArray(CompletableFuture[]::new))
          .get(60, TimeUnit.SECONDS);
    }
    return events.stream().map(EventEnvelope::eventId).toList();
  }

  private static void awaitApplied(Applied applied, List<UUID> sent) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!applied.ids.containsAll(sent)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Timed out waiting for " + sent + "; applied " + applied.ids);
      }
      Thread.sleep(50);
    }
    assertThat(applied.ids).containsExactlyInAnyOrderElementsOf(sent);
  }

  private static String messages(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.append(c.getMessage()).append('\n');
    }
    return all.toString();
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
