package dev.idemkit.spring.boot;

import dev.idemkit.DataProtection;
import dev.idemkit.FingerprintRecipes;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.JsonFieldRedactor;
import dev.idemkit.ReplayMode;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresDataKeyStore;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.KeyProvider;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Base64;
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
      ObjectProvider<IdemkitSchemaInitializer> schema,
      ObjectProvider<DataProtection> protection) {
    schema.ifAvailable(s -> {}); // the schema exists before the first request can use it
    List<IdempotencyListener> all = listeners.orderedStream().toList();
    return Idempotency.create(
        protection.getIfAvailable(DataProtection::none).protect(store),
        IdempotencyConfig.builder()
            .lease(properties.getLease())
            .defaultTtl(properties.getDefaultTtl())
            .outcomePendingRetryAfter(properties.getOutcomePendingRetryAfter())
            .listener(CompositeListener.of(all))
            .build());
  }

  /**
   * Stored answers as sensitive data ({@code idemkit.protection.*}): encryption with tenant data
   * keys in {@code idemkit_data_key}, redaction, replay modes, upcasters. Everything is off unless
   * configured; a {@link KeyProvider} bean (a KMS) replaces the configured master keys.
   */
  @Bean
  @ConditionalOnMissingBean
  public DataProtection idemkitDataProtection(
      IdemkitProperties properties,
      DataSource dataSource,
      ObjectProvider<KeyProvider> keyProvider,
      ObjectProvider<IdempotentReference> references,
      ObjectProvider<IdempotentUpcaster> upcasters,
      ObjectProvider<IdempotentRedactor> redactors) {
    IdemkitProperties.Protection p = properties.getProtection();
    DataProtection.Builder b = DataProtection.builder();
    if (p.getEncryption().isEnabled()) {
      KeyProvider keys =
          keyProvider.getIfAvailable(
              () -> {
                if (p.getEncryption().getMasterKeys().isEmpty()) {
                  throw new IllegalStateException(
                      "idemkit.protection.encryption.enabled=true needs master keys:"
                          + " idemkit.protection.encryption.master-keys.<id>=<base64 of 32 random"
                          + " bytes> and idemkit.protection.encryption.current-master-key=<id>, or a"
                          + " KeyProvider bean");
                }
                return StaticKeyProvider.ofBase64(
                    p.getEncryption().getMasterKeys(), p.getEncryption().getCurrentMasterKey());
              });
      b.encryption(keys, new PostgresDataKeyStore(dataSource))
          .keyCacheTtl(p.getEncryption().getKeyCacheTtl());
    }
    p.getRedact()
        .forEach(
            (operation, r) -> b.redact(operation, JsonFieldRedactor.of(r.getDrop(), r.getMask())));
    redactors.orderedStream().forEach(r -> b.redact(r.operation(), r));
    p.getReplayModes()
        .forEach(
            (operation, mode) -> {
              if (mode == ReplayMode.OUTCOME) {
                b.replayOutcome(operation);
              } else if (mode == ReplayMode.REFERENCE) {
                throw new IllegalStateException(
                    "idemkit.protection.replay-modes."
                        + operation
                        + "=REFERENCE: define an IdempotentReference bean for it instead");
              }
            });
    references
        .orderedStream()
        .forEach(r -> b.replayByReference(r.operation(), r.resourceType(), r));
    upcasters.orderedStream().forEach(u -> b.upcaster(u.operation(), u.fromVersion(), u));
    return b.build();
  }

  /**
   * How requests are fingerprinted: plain SHA-256 ({@code v1}), or HMAC-SHA-256 ({@code v2}) when
   * {@code idemkit.protection.fingerprint.current-hmac-key} is set. Define this bean to register
   * older canonical forms after a change of the command's shape.
   */
  @Bean
  @ConditionalOnMissingBean
  public FingerprintRecipes idemkitFingerprintRecipes(IdemkitProperties properties) {
    IdemkitProperties.Fingerprints f = properties.getProtection().getFingerprint();
    FingerprintRecipes.Builder b = FingerprintRecipes.builder();
    f.getHmacKeys().forEach((id, key) -> b.hmacKey(id, Base64.getDecoder().decode(key.trim())));
    if (!f.getCurrentHmacKey().isEmpty()) {
      b.currentHmacKey(f.getCurrentHmacKey()).current(FingerprintRecipes.V2);
    }
    return b.build();
  }

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
    byte[] bytes;
    if (secret == null || secret.isEmpty()) {
      log.warn(
          "idemkit.issued-keys.secret is not set: issued idempotency keys are signed with a random"
              + " secret and stop working when this process stops. Set it (the same on every"
              + " instance) in production.");
      bytes = IssuedKeys.randomSecret();
    } else {
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
