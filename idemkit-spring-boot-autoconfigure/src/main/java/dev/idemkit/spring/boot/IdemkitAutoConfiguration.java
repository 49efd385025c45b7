package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The engine on the application's DataSource and Spring transactions. A thin shell: every bean
 * backs off when the application defines its own.
 */
@AutoConfiguration(
    after = {
      DataSourceAutoConfiguration.class,
      DataSourceTransactionManagerAutoConfiguration.class
    },
    afterName = "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration")
@ConditionalOnClass({Idempotency.class, PostgresIdempotencyStore.class, JdbcTransactions.class})
@ConditionalOnBean({DataSource.class, PlatformTransactionManager.class})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitAutoConfiguration {

  private static final Logger log = LoggerFactory.getLogger(IdemkitAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  public JdbcTransactions idemkitJdbcTransactions(
      DataSource dataSource, PlatformTransactionManager transactionManager) {
    return new SpringJdbcTransactions(dataSource, transactionManager);
  }

  @Bean
  @ConditionalOnMissingBean
  public IdempotencyStore idempotencyStore(JdbcTransactions transactions) {
    return PostgresIdempotencyStore.builder(transactions).build();
  }

  /**
   * Applies Idemkit's schema files with their own history table, after the application's own
   * database initialization (its Flyway migrations), which must find its schema as it left it.
   */
  @Bean
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  @ConditionalOnProperty(prefix = "idemkit", name = "migrate-schema", matchIfMissing = true)
  public IdemkitSchemaInitializer idemkitSchemaInitializer(DataSource dataSource) {
    return new IdemkitSchemaInitializer(dataSource);
  }

  @Bean
  @ConditionalOnMissingBean
  public Idempotency idempotency(
      IdempotencyStore store,
      IdemkitProperties properties,
      ObjectProvider<IdempotencyListener> listeners,
      ObjectProvider<IdemkitSchemaInitializer> schema) {
    schema.ifAvailable(s -> {}); // the schema exists before the first request can use it
    List<IdempotencyListener> all = listeners.orderedStream().toList();
    return Idempotency.create(
        store,
        IdempotencyConfig.builder()
            .lease(properties.getLease())
            .defaultTtl(properties.getDefaultTtl())
            .outcomePendingRetryAfter(properties.getOutcomePendingRetryAfter())
            .listener(CompositeListener.of(all))
            .build());
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idemkit.recovery", name = "enabled", matchIfMissing = true)
  public IdempotencyRecoveryWorker idempotencyRecoveryWorker(
      Idempotency idempotency,
      IdempotencyStore store,
      ObjectProvider<RecoverableOperation> operations,
      IdemkitProperties properties) {
    return new IdempotencyRecoveryWorker(
        idempotency,
        store,
        operations.orderedStream().toList(),
        properties.getRecovery().getInterval(),
        properties.getRecovery().getBatchSize());
  }

  @Bean
  @ConditionalOnMissingBean
  public IssuedKeys idemkitIssuedKeys(IdemkitProperties properties) {
    return issuedKeys(properties);
  }

  /** Issued keys as the properties say; a random secret (with a warning) when none is set. */
  static IssuedKeys issuedKeys(IdemkitProperties properties) {
    String secret = properties.getIssuedKeys().getSecret();
    List<String> strict = properties.getIssuedKeys().getStrictOperations();
    String enforced =
        "Issued idempotency keys (ik_…): a key with that prefix must verify (signature, tenant,"
            + " operation, expiry) or is refused with 400 on every idempotent endpoint; "
            + (strict.isEmpty()
                ? "no operation is strict, so client-generated keys are accepted everywhere."
                : "only issued keys are accepted by " + String.join(", ", strict) + ".");
    byte[] bytes;
    if (secret == null || secret.isEmpty()) {
      log.warn(
          "{} idemkit.issued-keys.secret is not set: keys are signed with a random secret, so a"
              + " key issued here is refused after a restart and by other instances. Set the"
              + " same secret on every instance in production.",
          enforced);
      bytes = IssuedKeys.randomSecret();
    } else {
      log.info(enforced);
      bytes = secret.getBytes(StandardCharsets.UTF_8);
    }
    return new IssuedKeys(
        bytes,
        properties.getIssuedKeys().getValidity(),
        new HashSet<>(properties.getIssuedKeys().getStrictOperations()),
        Clock.systemUTC());
  }

  /** Runs Idemkit's migrations once, at start-up. */
  public static final class IdemkitSchemaInitializer implements InitializingBean {
    private final DataSource dataSource;

    public IdemkitSchemaInitializer(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    public void afterPropertiesSet() {
      int applied = IdemkitSchema.migrate(dataSource);
      if (applied > 0) {
        log.info("Applied {} Idemkit schema migration(s)", applied);
      }
    }
  }
}
