package dev.idemkit.spring.boot;

import dev.idemkit.DataProtection;
import dev.idemkit.Idempotency;
import dev.idemkit.spi.IdempotencyStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The record-life workers in the background: recovery ({@code idemkit.recovery.*}), cleanup ({@code
 * idemkit.cleanup.*}) and quota counts ({@code idemkit.quota.*}). Imported by {@link
 * IdemkitAutoConfiguration}, under its conditions.
 */
@Configuration(proxyBeanMethods = false)
class IdemkitWorkersConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idemkit.recovery", name = "enabled", matchIfMissing = true)
  public IdempotencyRecoveryWorker idempotencyRecoveryWorker(
      Idempotency idempotency,
      IdempotencyStore store,
      ObjectProvider<RecoverableOperation> operations,
      IdemkitProperties properties,
      ObjectProvider<DataProtection> protection) {
    return new IdempotencyRecoveryWorker(
        idempotency,
        // Operations resume from records as the engine sees them: recovery data opened.
        protection.getIfAvailable(DataProtection::none).protect(store),
        operations.orderedStream().toList(),
        properties.getRecovery().getInterval(),
        properties.getRecovery().getBatchSize(),
        properties.getRecovery(),
        idempotency.config().listener());
  }

  /** Cleanup on every instance, by default (idemkit.cleanup.*). */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idemkit.cleanup", name = "enabled", matchIfMissing = true)
  public IdempotencyCleanupWorker idempotencyCleanupWorker(
      Idempotency idempotency, IdempotencyStore store, IdemkitProperties properties) {
    return new IdempotencyCleanupWorker(
        store, idempotency.config().listener(), properties.getCleanup());
  }

  /**
   * Quota counts shared between instances in the background, on every instance, while quotas are
   * configured (idemkit.quota.*): admissions are decided in memory, with no statement.
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnExpression(
      "${idemkit.quota.new-keys-per-minute-per-tenant:0} > 0"
          + " or ${idemkit.quota.live-records-per-tenant:0} > 0")
  public IdempotencyQuotaWorker idempotencyQuotaWorker(
      Idempotency idempotency, IdemkitProperties properties) {
    return new IdempotencyQuotaWorker(idempotency, properties.getQuota().getSyncInterval());
  }
}
