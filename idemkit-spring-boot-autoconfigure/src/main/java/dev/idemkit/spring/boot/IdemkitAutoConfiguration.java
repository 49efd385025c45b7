package dev.idemkit.spring.boot;

import dev.idemkit.DataProtection;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.Quotas;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.jdbc.RecordLayout;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spring.boot.IdemkitProperties.ReplicationCheckMode;
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
import org.springframework.context.annotation.Import;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The engine on the application's DataSource and Spring transactions: its store, its schema and the
 * {@link Idempotency} itself. Data protection ({@link IdemkitDataProtectionConfiguration}), the
 * background workers ({@link IdemkitWorkersConfiguration}) and issued keys ({@link
 * IdemkitIssuedKeysConfiguration}) are imported under the same conditions. A thin shell: every bean
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
@Import({
  IdemkitDataProtectionConfiguration.class,
  IdemkitWorkersConfiguration.class,
  IdemkitIssuedKeysConfiguration.class
})
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
  public IdempotencyStore idempotencyStore(
      JdbcTransactions transactions, IdemkitProperties properties) {
    return PostgresIdempotencyStore.builder(transactions)
        .claimWait(properties.getClaimWait())
        .build();
  }

  /**
   * Applies Idemkit's schema files with their own history table, after the application's own
   * database initialization (its Flyway migrations), which must find its schema as it left it.
   */
  @Bean
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  @ConditionalOnProperty(prefix = "idemkit", name = "migrate-schema", matchIfMissing = true)
  public IdemkitSchemaInitializer idemkitSchemaInitializer(
      DataSource dataSource, IdemkitProperties properties) {
    return new IdemkitSchemaInitializer(dataSource, properties.getStore().recordLayout());
  }

  /**
   * With {@code idemkit.migrate-schema=false} the application applies the schema itself: a missing
   * or older schema then stops the start, saying so, instead of failing every request.
   */
  @Bean
  @ConditionalOnMissingBean({IdemkitSchemaInitializer.class, IdemkitSchemaCheck.class})
  @DependsOnDatabaseInitialization
  @ConditionalOnProperty(prefix = "idemkit", name = "migrate-schema", havingValue = "false")
  public IdemkitSchemaCheck idemkitSchemaCheck(
      DataSource dataSource, IdemkitProperties properties) {
    return new IdemkitSchemaCheck(dataSource, properties.getStore().recordLayout());
  }

  /**
   * Reads, once at start-up, whether the database can lose commits Idemkit acknowledged (in a
   * failover to an asynchronous standby, or with {@code synchronous_commit=off}) and says so, or
   * stops the start: {@code idemkit.database.replication-check}.
   */
  @Bean
  @ConditionalOnMissingBean
  public IdemkitReplicationCheck idemkitReplicationCheck(
      DataSource dataSource, IdemkitProperties properties) {
    return new IdemkitReplicationCheck(dataSource, properties.getDatabase().getReplicationCheck());
  }

  @Bean
  @ConditionalOnMissingBean
  public Idempotency idempotency(
      IdempotencyStore store,
      IdemkitProperties properties,
      ObjectProvider<IdempotencyListener> listeners,
      ObjectProvider<IdemkitSchemaInitializer> schema,
      ObjectProvider<IdemkitSchemaCheck> schemaCheck,
      ObjectProvider<DataProtection> protection) {
    // The schema exists (or its absence stopped the start) before the first request can use it.
    schema.ifAvailable(s -> {});
    schemaCheck.ifAvailable(s -> {});
    List<IdempotencyListener> all = listeners.orderedStream().toList();
    return Idempotency.create(
        protection.getIfAvailable(DataProtection::none).protect(store),
        IdempotencyConfig.builder()
            .lease(properties.getLease())
            .defaultTtl(properties.getDefaultTtl())
            .outcomePendingRetryAfter(properties.getOutcomePendingRetryAfter())
            .listener(FanOut.of(IdempotencyListener.class, all, IdempotencyListener.NONE))
            .quotas(quotas(properties.getQuota()))
            // The recovery worker's schedule holds for a client's retries too.
            .recoverySchedule(recoverySchedule(properties.getRecovery()))
            .build());
  }

  private static Quotas quotas(IdemkitProperties.Quota quota) {
    try {
      return new Quotas(
          quota.getNewKeysPerMinutePerTenant(),
          quota.getLiveRecordsPerTenant(),
          quota.getConcurrentRequestsPerTenant());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "idemkit.quota.new-keys-per-minute-per-tenant ("
              + quota.getNewKeysPerMinutePerTenant()
              + "), live-records-per-tenant ("
              + quota.getLiveRecordsPerTenant()
              + ") and concurrent-requests-per-tenant ("
              + quota.getConcurrentRequestsPerTenant()
              + ") are 0 (no limit) or positive",
          e);
    }
  }

  private static RecoverySchedule recoverySchedule(IdemkitProperties.Recovery recovery) {
    try {
      return new RecoverySchedule(
          recovery.getBackoff(), recovery.getMaxBackoff(), recovery.getMaxAttempts());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalStateException(
          "idemkit.recovery.backoff, max-backoff and max-attempts make no schedule: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Checks, at start-up, that the schema the application applied itself is there and current, and
   * that the record table has the configured layout (if one is).
   */
  public static final class IdemkitSchemaCheck implements InitializingBean {
    private final DataSource dataSource;
    private final RecordLayout layout;

    public IdemkitSchemaCheck(DataSource dataSource) {
      this(dataSource, null);
    }

    /** {@code layout}: the record table's expected layout; null: any. */
    public IdemkitSchemaCheck(DataSource dataSource, RecordLayout layout) {
      this.dataSource = dataSource;
      this.layout = layout;
    }

    /** On every shard when tenants are on shards ({@link TenantShards}). */
    @Override
    public void afterPropertiesSet() {
      for (DataSource database : TenantShards.each(dataSource)) {
        if (layout == null) {
          IdemkitSchema.requireCurrent(database);
        } else {
          IdemkitSchema.requireCurrent(database, layout);
        }
      }
    }
  }

  /**
   * Runs {@link ReplicationSafety} once at start-up: a safe or single-server database is logged at
   * INFO; an unsafe one, or one the check cannot judge, is logged at WARN ({@code warn}) or stops
   * the start ({@code refuse}).
   */
  public static final class IdemkitReplicationCheck implements InitializingBean {
    private final DataSource dataSource;
    private final ReplicationCheckMode mode;

    public IdemkitReplicationCheck(DataSource dataSource, ReplicationCheckMode mode) {
      this.dataSource = dataSource;
      this.mode = mode;
    }

    @Override
    public void afterPropertiesSet() {
      if (mode == ReplicationCheckMode.OFF) {
        return;
      }
      for (DataSource database : TenantShards.each(dataSource)) {
        check(ReplicationSafety.check(database));
      }
    }

    private void check(ReplicationSafety.Finding finding) {
      switch (finding.verdict()) {
        case SAFE, SINGLE_SERVER -> log.info("Idemkit replication check: {}", finding.message());
        case UNSAFE, UNKNOWN -> {
          if (mode == ReplicationCheckMode.REFUSE) {
            throw new ReplicationUnsafeException(finding.message());
          }
          log.warn(
              "Idemkit replication check: {} (docs/failover.md; starting anyway, as"
                  + " idemkit.database.replication-check=warn says)",
              finding.message());
        }
      }
    }
  }

  /**
   * Runs Idemkit's migrations once, at start-up, making a new record table in the configured layout
   * (if one is).
   */
  public static final class IdemkitSchemaInitializer implements InitializingBean {
    private final DataSource dataSource;
    private final RecordLayout layout;

    public IdemkitSchemaInitializer(DataSource dataSource) {
      this(dataSource, null);
    }

    /** {@code layout}: the record table's layout; null: the one it has, plain for a new one. */
    public IdemkitSchemaInitializer(DataSource dataSource, RecordLayout layout) {
      this.dataSource = dataSource;
      this.layout = layout;
    }

    /** On every shard when tenants are on shards ({@link TenantShards}). */
    @Override
    public void afterPropertiesSet() {
      for (DataSource database : TenantShards.each(dataSource)) {
        int applied =
            layout == null
                ? IdemkitSchema.migrate(database)
                : IdemkitSchema.migrate(database, layout);
        if (applied > 0) {
          log.info("Applied {} Idemkit schema migration(s)", applied);
        }
      }
    }
  }
}
