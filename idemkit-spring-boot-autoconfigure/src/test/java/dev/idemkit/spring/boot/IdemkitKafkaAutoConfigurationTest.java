package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.outbox.spi.EventTransport;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class IdemkitKafkaAutoConfigurationTest {

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
}
