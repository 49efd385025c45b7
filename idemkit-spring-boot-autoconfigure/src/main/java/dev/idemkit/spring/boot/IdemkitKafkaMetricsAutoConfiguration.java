package dev.idemkit.spring.boot;

import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.micrometer.KafkaConsumerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The Kafka consumers' own meters ({@link KafkaConsumerMetrics}: unreadable records, partitions
 * sent back after a failure, the commit-to-apply lag, and each consumer's held messages) when
 * Micrometer's registry is there and {@code idemkit.events.kafka.bootstrap-servers} is set: a
 * {@code KafkaConsumerListener} bean, which every consumer {@link KafkaConsumers} starts reports to
 * ({@link IdemkitKafkaAutoConfiguration}), and which adds that consumer's held-messages gauge when
 * it starts ({@link KafkaConsumerMetrics#started}).
 */
@AutoConfiguration(
    afterName =
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({KafkaConsumerMetrics.class, KafkaEventConsumer.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = "idemkit.events.kafka", name = "bootstrap-servers")
public class IdemkitKafkaMetricsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public KafkaConsumerMetrics idemkitKafkaConsumerMetrics(MeterRegistry registry) {
    return new KafkaConsumerMetrics(registry);
  }
}
