package dev.idemkit.spring.boot;

import dev.idemkit.micrometer.IdempotencyMetrics;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Idemkit's meters (contract §7 (docs/contract.md)) when Micrometer is there: one bean that is the
 * {@code MeterBinder} and hands its listener to the engine.
 */
@AutoConfiguration(
    after = IdemkitAutoConfiguration.class,
    afterName =
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({IdempotencyMetrics.class, MeterRegistry.class})
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
public class IdemkitMetricsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public IdempotencyMetrics idempotencyMetrics(IdempotencyStore store) {
    return new IdempotencyMetrics(store, Clock.systemUTC());
  }

  @Bean
  public IdempotencyListener idempotencyMetricsListener(IdempotencyMetrics metrics) {
    return metrics.listener();
  }
}
