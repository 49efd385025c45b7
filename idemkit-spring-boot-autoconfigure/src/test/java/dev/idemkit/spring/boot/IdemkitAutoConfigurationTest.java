package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.jdbc.RecordLayout;
import dev.idemkit.micrometer.IdempotencyMetrics;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spring.boot.IdemkitAutoConfiguration.IdemkitSchemaInitializer;
import dev.idemkit.testing.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.RequestBuilder;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * The auto-configuration on a real PostgreSQL (embedded, started once for the class), in plain and
 * servlet web application contexts.
 */
class IdemkitAutoConfigurationTest {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 10);
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  /**
   * The application's DataSource. A delegate, so that closing a test's context (which closes its
   * AutoCloseable beans) leaves the class's pool open.
   */
  private static DataSource applicationDataSource() {
    return new DelegatingDataSource(database.dataSource());
  }

  private static final AutoConfigurations IDEMKIT =
      AutoConfigurations.of(
          IdemkitAutoConfiguration.class,
          IdemkitWebMvcAutoConfiguration.class,
          IdemkitMetricsAutoConfiguration.class);

  private static final AutoConfigurations TRANSACTIONS =
      AutoConfigurations.of(
          DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class);

  private static final AutoConfigurations WEB_MVC =
      AutoConfigurations.of(
          JacksonAutoConfiguration.class,
          HttpMessageConvertersAutoConfiguration.class,
          DispatcherServletAutoConfiguration.class,
          WebMvcAutoConfiguration.class,
          AopAutoConfiguration.class);

  /** Outside the embedded demo, the issued-key secret is required configuration. */
  private static final String SECRET = "idemkit.issued-keys.secret=a-test-secret-of-enough-bytes";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(TRANSACTIONS)
          .withConfiguration(IDEMKIT)
          .withPropertyValues(SECRET)
          .withBean(DataSource.class, IdemkitAutoConfigurationTest::applicationDataSource);

  private final WebApplicationContextRunner webRunner =
      new WebApplicationContextRunner()
          .withConfiguration(TRANSACTIONS)
          .withConfiguration(WEB_MVC)
          .withConfiguration(IDEMKIT)
          .withPropertyValues(SECRET)
          .withBean(DataSource.class, IdemkitAutoConfigurationTest::applicationDataSource);

  // ---- the beans --------------------------------------------------------------------------

  @Test
  void onADataSourceItConfiguresTheEngineAndItsParts() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(Idempotency.class);
          assertThat(context).hasSingleBean(IdempotencyStore.class);
          assertThat(context).hasSingleBean(JdbcTransactions.class);
          assertThat(context).hasSingleBean(IssuedKeys.class);
          assertThat(context).hasSingleBean(IdemkitProperties.class);
          assertThat(context).hasSingleBean(IdemkitSchemaInitializer.class);
          assertThat(context.getBean(JdbcTransactions.class))
              .isInstanceOf(SpringJdbcTransactions.class);
          assertThat(context.getBean(IdempotencyStore.class))
              .isInstanceOf(PostgresIdempotencyStore.class);

          Outcome outcome = executeOnce(context.getBean(Idempotency.class), "create_payment");
          assertThat(outcome).isInstanceOf(Outcome.Executed.class);
        });
  }

  @Test
  void cleanupIsScheduledByDefaultWithItsDocumentedSettingsAndCanBeTurnedOff() {
    runner.run(
        context -> {
          assertThat(context).hasSingleBean(IdempotencyCleanupWorker.class);
          assertThat(context.getBean(IdempotencyCleanupWorker.class).isRunning()).isTrue();
          IdemkitProperties.Cleanup cleanup = context.getBean(IdemkitProperties.class).getCleanup();
          assertThat(cleanup.getInterval()).isLessThanOrEqualTo(java.time.Duration.ofMinutes(1));
          assertThat(cleanup.getBatchSize()).isEqualTo(1000);
          assertThat(cleanup.getBodyRetention()).isZero();
          assertThat(context.getBean(dev.idemkit.Idempotency.class).config().quotas())
              .isEqualTo(dev.idemkit.Quotas.NONE);
        });
    runner
        .withPropertyValues(
            "idemkit.cleanup.enabled=false",
            "idemkit.recovery.max-attempts=3",
            "idemkit.quota.new-keys-per-minute-per-tenant=10")
        .run(
            context -> {
              assertThat(context).doesNotHaveBean(IdempotencyCleanupWorker.class);
              IdemkitProperties p = context.getBean(IdemkitProperties.class);
              assertThat(p.getRecovery().getMaxAttempts()).isEqualTo(3);
              assertThat(p.getQuota().getNewKeysPerMinutePerTenant()).isEqualTo(10);
            });
  }

  @Test
  void quotaCountsAreSharedInTheBackgroundOnlyWhileQuotasAreConfigured() {
    runner.run(context -> assertThat(context).doesNotHaveBean(IdempotencyQuotaWorker.class));
    runner
        .withPropertyValues(
            "idemkit.quota.live-records-per-tenant=5", "idemkit.quota.sync-interval=200ms")
        .run(
            context -> {
              assertThat(context).hasSingleBean(IdempotencyQuotaWorker.class);
              assertThat(context.getBean(IdempotencyQuotaWorker.class).isRunning()).isTrue();
              assertThat(context.getBean(IdemkitProperties.class).getQuota().getSyncInterval())
                  .isEqualTo(java.time.Duration.ofMillis(200));
              context.getBean(IdempotencyQuotaWorker.class).syncOnce();
            });
  }

  @Test
  void outsideAWebApplicationThereIsNoInterceptor() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(IdempotentMethodInterceptor.class);
          assertThat(context).doesNotHaveBean("idempotentAdvisor");
          assertThat(context).doesNotHaveBean(IdempotencyTenantResolver.class);
        });
  }

  /**
   * Ordered after DataSourceAutoConfiguration: the DataSource Boot makes from properties counts.
   */
  @Test
  void itUsesTheDataSourceBootConfiguresFromSpringDatasourceUrl() {
    HikariDataSource pool = (HikariDataSource) database.dataSource();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
        .withConfiguration(TRANSACTIONS)
        .withConfiguration(IDEMKIT)
        .withPropertyValues(
            SECRET,
            "spring.datasource.url=" + pool.getJdbcUrl(),
            "spring.datasource.username=" + pool.getUsername(),
            "spring.datasource.password=" + pool.getPassword())
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Idempotency.class);
              assertThat(context.getBean(DataSource.class)).isNotSameAs(pool);
              assertThat(executeOnce(context.getBean(Idempotency.class), "op"))
                  .isInstanceOf(Outcome.Executed.class);
            });
  }

  // ---- backing off ------------------------------------------------------------------------

  @Test
  void aUserStoreWins() {
    IdempotencyStore mine = new InMemoryIdempotencyStore();
    runner
        .withBean(IdempotencyStore.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(IdempotencyStore.class);
              assertThat(context.getBean(IdempotencyStore.class)).isSameAs(mine);
              ScopedKey id = ScopedKey.of("tenant-a", "op", UUID.randomUUID().toString());
              assertThat(execute(context.getBean(Idempotency.class), id))
                  .isInstanceOf(Outcome.Executed.class);
              assertThat(mine.find(id)).as("the engine stores in the user's store").isPresent();
            });
  }

  @Test
  void aUserEngineWins() {
    Idempotency mine = Idempotency.create(new InMemoryIdempotencyStore());
    runner
        .withBean(Idempotency.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(Idempotency.class);
              assertThat(context.getBean(Idempotency.class)).isSameAs(mine);
            });
  }

  @Test
  void userTransactionsWin() {
    JdbcTransactions mine = JdbcTransactions.of(database.dataSource());
    runner
        .withBean(JdbcTransactions.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(JdbcTransactions.class);
              assertThat(context.getBean(JdbcTransactions.class)).isSameAs(mine);
            });
  }

  @Test
  void userIssuedKeysWin() {
    IssuedKeys mine =
        new IssuedKeys(
            IssuedKeys.randomSecret(), Duration.ofMinutes(5), Set.of("mine"), Clock.systemUTC());
    runner
        .withBean(IssuedKeys.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(IssuedKeys.class);
              assertThat(context.getBean(IssuedKeys.class)).isSameAs(mine);
            });
  }

  @Test
  void aUserTenantResolverWins() {
    IdempotencyTenantResolver mine = request -> "fixed-tenant";
    webRunner
        .withBean(IdempotencyTenantResolver.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(IdempotencyTenantResolver.class);
              assertThat(context.getBean(IdempotencyTenantResolver.class)).isSameAs(mine);
            });
  }

  @Test
  void aUserFingerprinterWins() {
    RequestFingerprinter mine = new RequestFingerprinter(JsonMapper.builder().build());
    webRunner
        .withBean(RequestFingerprinter.class, () -> mine)
        .run(
            context -> {
              assertThat(context).hasSingleBean(RequestFingerprinter.class);
              assertThat(context.getBean(RequestFingerprinter.class)).isSameAs(mine);
            });
  }

  @Test
  void schemaMigrationCanBeTurnedOff() {
    runner
        .withPropertyValues("idemkit.migrate-schema=false")
        .run(
            context -> {
              assertThat(context).doesNotHaveBean(IdemkitSchemaInitializer.class);
              assertThat(context).hasSingleBean(Idempotency.class);
            });
  }

  @Test
  void withMigrationTurnedOffAMissingSchemaStopsTheStartSayingWhatToDo() throws Exception {
    try (HikariDataSource empty = schemaOfItsOwn("unmigrated")) {
      new ApplicationContextRunner()
          .withConfiguration(TRANSACTIONS)
          .withConfiguration(IDEMKIT)
          .withPropertyValues(SECRET, "idemkit.migrate-schema=false")
          .withBean(DataSource.class, () -> new DelegatingDataSource(empty))
          .run(
              context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("Idemkit's tables are not in this database")
                    .hasMessageContaining("idemkit.migrate-schema=true");
              });
    }
  }

  @Test
  void theStoreLayoutPropertiesMakeANewRecordTableHashPartitionedAndAnotherLayoutStopsTheStart()
      throws Exception {
    try (HikariDataSource own = schemaOfItsOwn("layout")) {
      ApplicationContextRunner onOwnSchema =
          new ApplicationContextRunner()
              .withConfiguration(TRANSACTIONS)
              .withConfiguration(IDEMKIT)
              .withBean(DataSource.class, () -> new DelegatingDataSource(own));
      onOwnSchema
          .withPropertyValues(
              SECRET, "idemkit.store.layout=hash-partitioned", "idemkit.store.partitions=4")
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                assertThat(IdemkitSchema.layout(own)).isEqualTo(RecordLayout.hashPartitioned(4));
                assertThat(executeOnce(context.getBean(Idempotency.class), "create_payment"))
                    .isInstanceOf(Outcome.Executed.class);
              });
      onOwnSchema
          .withPropertyValues(SECRET, "idemkit.store.layout=plain")
          .run(
              context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("idemkit_record is hash-partitioned (4 partitions)")
                    .hasMessageContaining("docs/scaling.md");
              });
    }
  }

  /** A pool on a new, empty schema of the class's database ({@code prefix} and a random id). */
  private static HikariDataSource schemaOfItsOwn(String prefix) throws Exception {
    String schema = prefix + "_" + UUID.randomUUID().toString().replace("-", "");
    String url;
    try (var c = database.dataSource().getConnection();
        var s = c.createStatement()) {
      s.execute("create schema " + schema);
      url = c.getMetaData().getURL();
    }
    HikariDataSource own = new HikariDataSource();
    own.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema);
    own.setUsername(((HikariDataSource) database.dataSource()).getUsername());
    own.setPassword(((HikariDataSource) database.dataSource()).getPassword());
    return own;
  }

  // ---- turned off -------------------------------------------------------------------------

  @Test
  void disabledItConfiguresNothing() {
    webRunner
        .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("idemkit.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertNoIdemkitBeans(context);
              assertThat(context).hasSingleBean(PlatformTransactionManager.class);
            });
  }

  @Test
  void withoutADataSourceItConfiguresNothing() {
    new WebApplicationContextRunner()
        .withConfiguration(TRANSACTIONS)
        .withConfiguration(WEB_MVC)
        .withConfiguration(IDEMKIT)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(DataSource.class);
              assertNoIdemkitBeans(context);
            });
  }

  private static void assertNoIdemkitBeans(ApplicationContextAssertProvider<?> context) {
    assertThat(context).doesNotHaveBean(Idempotency.class);
    assertThat(context).doesNotHaveBean(IdempotencyStore.class);
    assertThat(context).doesNotHaveBean(JdbcTransactions.class);
    assertThat(context).doesNotHaveBean(IssuedKeys.class);
    assertThat(context).doesNotHaveBean(IdemkitProperties.class);
    assertThat(context).doesNotHaveBean(IdemkitSchemaInitializer.class);
    assertThat(context).doesNotHaveBean(IdempotencyMetrics.class);
    assertThat(context).doesNotHaveBean(IdempotentMethodInterceptor.class);
    assertThat(context).doesNotHaveBean(IdempotencyTenantResolver.class);
    assertThat(context).doesNotHaveBean("idempotentAdvisor");
  }

  /**
   * An application with an engine of its own (another store, no DataSource) still gets
   * {@code @Idempotent}: the web configuration's dependencies must not come only from the JDBC one.
   */
  @Test
  void aUserEngineWithoutADataSourceGetsTheInterceptor() {
    new WebApplicationContextRunner()
        .withConfiguration(WEB_MVC)
        .withConfiguration(IDEMKIT)
        .withPropertyValues(SECRET)
        .withBean(Idempotency.class, () -> Idempotency.create(new InMemoryIdempotencyStore()))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(IdempotentMethodInterceptor.class);
            });
  }

  @Test
  void disabledWithAUserEngineConfiguresNothingAndStarts() {
    webRunner
        .withBean(Idempotency.class, () -> Idempotency.create(new InMemoryIdempotencyStore()))
        .withPropertyValues("idemkit.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(IdempotentMethodInterceptor.class);
              assertThat(context).doesNotHaveBean("idempotentAdvisor");
            });
  }

  // ---- properties -------------------------------------------------------------------------

  @Test
  void propertiesBindAndReachTheEngine() {
    runner
        .withPropertyValues(
            "idemkit.default-ttl=PT1H",
            "idemkit.lease=PT5S",
            "idemkit.mismatch-status=409",
            "idemkit.issued-keys.strict-operations=a,b")
        .run(
            context -> {
              IdemkitProperties properties = context.getBean(IdemkitProperties.class);
              assertThat(properties.getDefaultTtl()).isEqualTo(Duration.ofHours(1));
              assertThat(properties.getLease()).isEqualTo(Duration.ofSeconds(5));
              assertThat(properties.getMismatchStatus()).isEqualTo(409);
              assertThat(properties.getIssuedKeys().getStrictOperations())
                  .containsExactly("a", "b");

              Idempotency idempotency = context.getBean(Idempotency.class);
              assertThat(idempotency.config().defaultTtl()).isEqualTo(Duration.ofHours(1));
              assertThat(idempotency.config().lease()).isEqualTo(Duration.ofSeconds(5));

              IssuedKeys issuedKeys = context.getBean(IssuedKeys.class);
              assertThat(issuedKeys.isStrict("a")).isTrue();
              assertThat(issuedKeys.isStrict("b")).isTrue();
              assertThat(issuedKeys.isStrict("c")).isFalse();
            });
  }

  @Test
  void theDefaultsAreTheDocumentedOnes() {
    runner.run(
        context -> {
          IdemkitProperties properties = context.getBean(IdemkitProperties.class);
          assertThat(properties.getDefaultTtl()).isEqualTo(Duration.ofHours(24));
          assertThat(properties.getLease()).isEqualTo(Duration.ofSeconds(30));
          assertThat(properties.getMismatchStatus()).isEqualTo(422);
          assertThat(properties.getReplayableStatuses()).containsExactly(402, 404, 409, 410, 422);
          assertThat(context.getBean(IssuedKeys.class).isStrict("create_payment")).isFalse();
        });
  }

  @Test
  void anInvalidMismatchStatusFailsStartUp() {
    runner
        .withPropertyValues("idemkit.mismatch-status=500")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("idemkit.mismatch-status must be 422 or 409");
            });
  }

  @Test
  void recordLifeSettingsThatCannotWorkFailStartUpNamingTheProperty() {
    Map<String, String> refused =
        Map.of(
            "idemkit.cleanup.body-retention=-PT1H", "idemkit.cleanup.body-retention",
            "idemkit.cleanup.metadata-retention=-P1D", "metadata-retention cannot be negative",
            "idemkit.cleanup.pause=-1s", "idemkit.cleanup.pause cannot be negative",
            "idemkit.cleanup.interval=0s", "idemkit.cleanup.interval must be positive",
            "idemkit.recovery.interval=0s", "idemkit.recovery.interval must be positive",
            "idemkit.recovery.batch-size=0", "idemkit.recovery.batch-size must be positive",
            "idemkit.quota.live-records-per-tenant=-1", "live-records-per-tenant (-1)",
            "idemkit.quota.new-keys-per-minute-per-tenant=-5",
                "new-keys-per-minute-per-tenant (-5)",
            "idemkit.quota.concurrent-requests-per-tenant=-2",
                "concurrent-requests-per-tenant (-2)");
    refused.forEach(
        (property, message) ->
            runner
                .withPropertyValues(property)
                .run(
                    context -> {
                      assertThat(context).as(property).hasFailed();
                      assertThat(context.getStartupFailure())
                          .as(property)
                          .hasStackTraceContaining(message);
                    }));
  }

  @Test
  void outsideTheEmbeddedDemoAMissingSecretStopsTheStart() {
    new ApplicationContextRunner()
        .withConfiguration(TRANSACTIONS)
        .withConfiguration(IDEMKIT)
        .withBean(DataSource.class, IdemkitAutoConfigurationTest::applicationDataSource)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("idemkit.issued-keys.secret is not set");
              // What the user reads: one sentence, then what to set.
              var analysis = new KeySettingFailureAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis.getDescription())
                  .isEqualTo(
                      "idemkit.issued-keys.secret is not set, and only the embedded demo database"
                          + " makes one up.");
              assertThat(analysis.getAction())
                  .startsWith("Set idemkit.issued-keys.secret (e.g. IDEMKIT_ISSUED_KEYS_SECRET)")
                  .doesNotContain("\n");
            });
  }

  @Test
  void theEmbeddedDemosSecretSurvivesARestart(@TempDir Path demoData) {
    ApplicationContextRunner demo =
        new ApplicationContextRunner()
            .withConfiguration(TRANSACTIONS)
            .withConfiguration(IDEMKIT)
            .withBean(DataSource.class, IdemkitAutoConfigurationTest::applicationDataSource)
            .withPropertyValues(
                "idemkit.embedded.active=true", "idemkit.embedded.data-dir=" + demoData);
    IssuedKeys.Issued[] issued = new IssuedKeys.Issued[1];
    demo.run(
        before -> {
          assertThat(before).hasNotFailed();
          issued[0] = before.getBean(IssuedKeys.class).issue("tenant-a", "create_payment");
        });
    demo.run(
        after ->
            assertThat(
                    after
                        .getBean(IssuedKeys.class)
                        .verify(issued[0].key(), "tenant-a", "create_payment"))
                .isTrue());
    assertThat(demoData.resolve(IdemkitIssuedKeysConfiguration.DEMO_SECRET_FILE)).exists();
  }

  @Test
  void instancesWithTheSameSecretAcceptEachOthersIssuedKeys() {
    ApplicationContextRunner withSecret =
        runner.withPropertyValues(
            "idemkit.issued-keys.secret=a-shared-secret-of-enough-bytes",
            "idemkit.issued-keys.validity=PT10M");
    withSecret.run(
        first ->
            withSecret.run(
                second -> {
                  Instant before = Instant.now();
                  IssuedKeys.Issued issued =
                      first.getBean(IssuedKeys.class).issue("tenant-a", "create_payment");
                  assertThat(
                          second
                              .getBean(IssuedKeys.class)
                              .verify(issued.key(), "tenant-a", "create_payment"))
                      .isTrue();
                  assertThat(issued.expiresAt())
                      .isBetween(
                          before.plus(Duration.ofMinutes(10)).minusSeconds(1),
                          Instant.now().plus(Duration.ofMinutes(10)));
                }));
  }

  // ---- Spring MVC -------------------------------------------------------------------------

  @Test
  void inAWebApplicationTheInterceptorAndItsAdvisorExist() {
    webRunner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(IdempotentMethodInterceptor.class);
          assertThat(context).hasSingleBean(IdempotencyTenantResolver.class);
          assertThat(context).hasSingleBean(RequestFingerprinter.class);
          assertThat(context).hasBean("idempotentAdvisor");
          assertThat(context.getBean("idempotentAdvisor")).isInstanceOf(Advisor.class);
        });
  }

  @Test
  void anIdempotentHandlerNotReturningResponseEntityFailsStartUpNamingIt() {
    webRunner
        .withUserConfiguration(PlainBodyController.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .hasMessageContaining("@Idempotent handler")
                  .hasMessageContaining(PlainBodyController.class.getName() + ".create(")
                  .hasMessageContaining("must return ResponseEntity");
            });
  }

  @Test
  void inputsTheFingerprintWouldNotHoldFailStartUpNamingEachOne() {
    webRunner
        .withUserConfiguration(UnfingerprintedController.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .hasMessageContaining(UnfingerprintedController.class.getName() + ".byQuery(")
                  .hasMessageContaining("@RequestParam amount")
                  .hasMessageContaining("@RequestHeader currency")
                  .hasMessageContaining("request parameter note (unannotated String)")
                  .hasMessageContaining("body property \"cardNumber\" of Card")
                  .hasMessageContaining("body property \"card.cvc\" of Wallet")
                  .hasMessageContaining("not in the request's fingerprint")
                  .hasMessageNotContaining("\"amount\" of Card")
                  .hasMessageNotContaining("\"ignored\"")
                  .hasMessageNotContaining(".versioned(");
            });
  }

  @Test
  void aBlankOperationOrAnUnreadableWindowFailsStartUp() {
    webRunner
        .withUserConfiguration(BadAnnotationController.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .hasMessageContaining(".blank(")
                  .hasMessageContaining("has a blank operation")
                  .hasMessageContaining(".dayWindow(")
                  .hasMessageContaining("ttl \"24h\", which is not an ISO-8601 duration");
            });
  }

  @Test
  void idempotentOnABeanThatIsNotAControllerFailsStartUp() {
    webRunner
        .withUserConfiguration(IdempotentService.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining(IdempotentService.class.getName() + ".pay(")
                  .hasMessageContaining("which is not a controller")
                  .hasMessageContaining("inject Idempotency");
            });
  }

  @Test
  void anIdempotentHandlerRunsOnceAndItsAnswerIsReplayed() {
    webRunner
        .withUserConfiguration(PaymentController.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              PaymentController controller = context.getBean(PaymentController.class);
              assertThat(AopUtils.isAopProxy(controller))
                  .as("the advisor applies to @Idempotent handlers")
                  .isTrue();
              MockMvc mvc =
                  MockMvcBuilders.webAppContextSetup(
                          (WebApplicationContext) context.getSourceApplicationContext())
                      .build();
              String key = UUID.randomUUID().toString();

              MvcResult first =
                  mvc.perform(payment(key, 100))
                      .andExpect(status().isCreated())
                      .andExpect(header().string("Location", "/v1/payments/p1"))
                      .andExpect(header().doesNotExist(IdempotentMethodInterceptor.REPLAYED_HEADER))
                      .andExpect(jsonPath("$.id").value("p1"))
                      .andReturn();
              MvcResult retry =
                  mvc.perform(payment(key, 100))
                      .andExpect(status().isCreated())
                      .andExpect(header().string("Location", "/v1/payments/p1"))
                      .andExpect(
                          header().string(IdempotentMethodInterceptor.REPLAYED_HEADER, "true"))
                      .andReturn();
              assertThat(retry.getResponse().getContentAsByteArray())
                  .isEqualTo(first.getResponse().getContentAsByteArray());
              // The handler's record is claimed first: the retry does not run it again.
              assertThat(controller.runs()).isEqualTo(1);

              mvc.perform(payment(key, 200))
                  .andExpect(status().isUnprocessableContent())
                  .andExpect(
                      jsonPath("$.errorCode")
                          .value("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST"));
              mvc.perform(
                      post("/v1/accounts/acc-1/payments")
                          .principal(() -> "tenant-a")
                          .contentType(MediaType.APPLICATION_JSON)
                          .content("{\"amount\":100}"))
                  .andExpect(status().isBadRequest())
                  .andExpect(jsonPath("$.errorCode").value("IDEMPOTENCY_KEY_MISSING"));
              // Neither the mismatch nor the missing key reached it.
              assertThat(controller.runs()).isEqualTo(1);
            });
  }

  private static RequestBuilder payment(String key, int amount) {
    return post("/v1/accounts/acc-1/payments")
        .principal(() -> "tenant-a")
        .header(IdempotentMethodInterceptor.KEY_HEADER, key)
        .contentType(MediaType.APPLICATION_JSON)
        .content("{\"amount\":" + amount + "}");
  }

  // ---- metrics ----------------------------------------------------------------------------

  @Test
  void withMicrometerTheEngineRecordsIntoTheRegistry() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    runner
        .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
        .withBean(MeterRegistry.class, () -> registry)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(IdempotencyMetrics.class);

              executeOnce(context.getBean(Idempotency.class), "create_payment");

              Timer requests =
                  registry
                      .find("idempotency.requests")
                      .tag("operation", "create_payment")
                      .tag("outcome", "executed")
                      .timer();
              assertThat(requests).isNotNull();
              assertThat(requests.count()).isEqualTo(1);
              assertThat(registry.find("idempotency.in_progress.age.max").meter())
                  .as("IdempotencyMetrics is bound to the registry as a MeterBinder")
                  .isNotNull();
            });
  }

  @Test
  void withoutIdemkitMicrometerThereAreNoMetricsAndTheEngineStillRuns() {
    runner
        .withClassLoader(new FilteredClassLoader(IdempotencyMetrics.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean("idempotencyMetrics");
              assertThat(executeOnce(context.getBean(Idempotency.class), "op"))
                  .isInstanceOf(Outcome.Executed.class);
            });
  }

  // ---- helpers ----------------------------------------------------------------------------

  private static Outcome executeOnce(Idempotency idempotency, String operation) {
    return execute(idempotency, ScopedKey.of("tenant-a", operation, UUID.randomUUID().toString()));
  }

  private static Outcome execute(Idempotency idempotency, ScopedKey id) {
    return idempotency.execute(
        new IdempotentRequest(id, Fingerprint.of(Map.of("amount", 1)), Duration.ofHours(1)),
        (LocalOperation)
            ctx -> OperationResult.success(StoredResponse.of(200, Map.of(), new byte[0])));
  }

  record CreatePayment(int amount) {}

  @RestController
  static class PaymentController {
    private final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/v1/accounts/{account}/payments")
    @Idempotent(operation = "create_payment")
    public ResponseEntity<Map<String, Object>> create(
        @PathVariable String account, @RequestBody CreatePayment command) {
      String id = "p" + runs.incrementAndGet();
      return ResponseEntity.created(URI.create("/v1/payments/" + id))
          .body(Map.of("id", id, "account", account, "amount", command.amount()));
    }

    public int runs() {
      return runs.get();
    }
  }

  @RestController
  static class PlainBodyController {
    @PostMapping("/v1/plain")
    @Idempotent(operation = "plain")
    public Map<String, Object> create(@RequestBody CreatePayment command) {
      return Map.of("amount", command.amount());
    }
  }

  record Card(
      String amount,
      @com.fasterxml.jackson.annotation.JsonProperty(
              access = com.fasterxml.jackson.annotation.JsonProperty.Access.WRITE_ONLY)
          String cardNumber,
      @com.fasterxml.jackson.annotation.JsonIgnore String ignored) {}

  /** A nested bean whose field has a setter only. */
  static class CardSecret {
    private String cvc;

    public void setCvc(String cvc) {
      this.cvc = cvc;
    }
  }

  record Wallet(String owner, CardSecret card) {}

  @RestController
  static class UnfingerprintedController {
    @PostMapping("/v1/query")
    @Idempotent(operation = "by_query")
    public ResponseEntity<String> byQuery(
        @org.springframework.web.bind.annotation.RequestParam String amount,
        @org.springframework.web.bind.annotation.RequestHeader("X-Currency") String currency,
        String note) {
      return ResponseEntity.ok(amount + currency + note);
    }

    @PostMapping("/v1/card")
    @Idempotent(operation = "card")
    public ResponseEntity<String> card(@RequestBody Card card) {
      return ResponseEntity.ok(card.amount());
    }

    @PostMapping("/v1/wallet")
    @Idempotent(operation = "wallet")
    public ResponseEntity<String> wallet(@RequestBody Wallet wallet) {
      return ResponseEntity.ok(wallet.owner());
    }

    /** The fingerprint holds the API version and the path: fine. */
    @PostMapping("/v1/versioned/{id}")
    @Idempotent(operation = "versioned")
    public ResponseEntity<String> versioned(
        @PathVariable String id,
        @org.springframework.web.bind.annotation.RequestHeader("Api-Version") String version,
        @RequestBody CreatePayment command) {
      return ResponseEntity.ok(id + version);
    }
  }

  @RestController
  static class BadAnnotationController {
    @PostMapping("/v1/blank")
    @Idempotent(operation = " ")
    public ResponseEntity<String> blank(@RequestBody CreatePayment command) {
      return ResponseEntity.ok("");
    }

    @PostMapping("/v1/day")
    @Idempotent(operation = "day", ttl = "24h")
    public ResponseEntity<String> dayWindow(@RequestBody CreatePayment command) {
      return ResponseEntity.ok("");
    }
  }

  @org.springframework.stereotype.Service
  static class IdempotentService {
    @Idempotent(operation = "pay")
    public String pay(String amount) {
      return amount;
    }
  }

  // ---- data protection --------------------------------------------------------------------

  @Test
  void aMasterKeyThatStillWrapsDataKeysCannotBeLeftOutOfConfiguration() throws Exception {
    // A schema of its own: the class's database holds other tests' data keys.
    String schema = "master_keys_" + UUID.randomUUID().toString().replace("-", "");
    String url;
    try (var c = database.dataSource().getConnection();
        var s = c.createStatement()) {
      s.execute("create schema " + schema);
      url = c.getMetaData().getURL();
    }
    String oldKey = "idemkit.protection.encryption.master-keys.mk-retired=";
    String oldValue = dev.idemkit.StaticKeyProvider.newKeyBase64();
    String nextKey =
        "idemkit.protection.encryption.master-keys.mk-next="
            + dev.idemkit.StaticKeyProvider.newKeyBase64();
    try (HikariDataSource own = new HikariDataSource()) {
      own.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema);
      own.setUsername(((HikariDataSource) database.dataSource()).getUsername());
      own.setPassword(((HikariDataSource) database.dataSource()).getPassword());
      ApplicationContextRunner encrypted =
          new ApplicationContextRunner()
              .withConfiguration(TRANSACTIONS)
              .withConfiguration(IDEMKIT)
              .withPropertyValues(SECRET, "idemkit.protection.encryption.enabled=true")
              .withBean(DataSource.class, () -> new DelegatingDataSource(own));
      encrypted
          .withPropertyValues(
              oldKey + oldValue, "idemkit.protection.encryption.current-master-key=mk-retired")
          .run(
              context ->
                  assertThat(executeOnce(context.getBean(Idempotency.class), "create_payment"))
                      .isInstanceOf(Outcome.Executed.class));

      // The retired key left out before its data keys were re-wrapped: the start stops.
      encrypted
          .withPropertyValues(nextKey, "idemkit.protection.encryption.current-master-key=mk-next")
          .run(
              context ->
                  assertThat(context)
                      .getFailure()
                      .rootCause()
                      .hasMessageContaining("wrapped by master key(s) mk-retired that")
                      .hasMessageContaining("DataProtection.rewrapDataKeys(\"mk-retired\")"));
      encrypted
          .withPropertyValues(
              oldKey + oldValue,
              nextKey,
              "idemkit.protection.encryption.current-master-key=mk-next")
          .run(context -> assertThat(context).hasNotFailed());

      // The retired key configured under its id with another value: the start stops, naming it
      // (it answered 500 to each of its tenants' requests instead), whether encryption is on or
      // only reads what it sealed.
      String otherValue = oldKey + dev.idemkit.StaticKeyProvider.newKeyBase64();
      for (String encryption : java.util.List.of("true", "false")) {
        encrypted
            .withPropertyValues(
                otherValue,
                nextKey,
                "idemkit.protection.encryption.current-master-key=mk-next",
                "idemkit.protection.encryption.enabled=" + encryption)
            .run(
                context ->
                    assertThat(context)
                        .getFailure()
                        .as("encryption.enabled=" + encryption)
                        .rootCause()
                        .isInstanceOf(KeySettingException.class)
                        .hasMessageStartingWith(
                            "idemkit.protection.encryption.master-keys.mk-retired does not unwrap"
                                + " the data keys it wrapped")
                        .hasMessageNotContaining(oldValue));
      }
    }
  }

  @Test
  void aKeySettingThatStopsTheStartIsAnalysedAsOneLineNamingTheProperty() {
    KeySettingException failure =
        new KeySettingException(
            "idemkit.protection.encryption.current-master-key=mk9 names no key",
            KeySettingException.fix("idemkit.protection.encryption.current-master-key"));
    var analysis =
        new KeySettingFailureAnalyzer()
            .analyze(new IllegalStateException("bean creation failed", failure));
    assertThat(analysis.getDescription())
        .isEqualTo("idemkit.protection.encryption.current-master-key=mk9 names no key");
    assertThat(analysis.getAction())
        .contains("idemkit.protection.encryption.current-master-key")
        .doesNotContain("\n");
  }

  @Test
  void dataProtectionIsOffByDefaultAndTurnsOnFromProperties() {
    runner.run(
        context -> {
          assertThat(context.getBean(dev.idemkit.DataProtection.class).encrypts()).isFalse();
          assertThat(context.getBean(dev.idemkit.FingerprintRecipes.class).current())
              .isEqualTo("v1");
        });
    runner
        .withPropertyValues(
            "idemkit.protection.encryption.enabled=true",
            "idemkit.protection.encryption.master-keys.mk="
                + dev.idemkit.StaticKeyProvider.newKeyBase64(),
            "idemkit.protection.encryption.current-master-key=mk",
            "idemkit.protection.fingerprint.hmac-keys.fk="
                + dev.idemkit.StaticKeyProvider.newKeyBase64(),
            "idemkit.protection.fingerprint.current-hmac-key=fk",
            "idemkit.protection.redact.create_payment.drop=card.cvc")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(dev.idemkit.DataProtection.class).encrypts()).isTrue();
              assertThat(
                      context.getBean(dev.idemkit.DataProtection.class).redactor("create_payment"))
                  .isNotNull();
              assertThat(context.getBean(dev.idemkit.FingerprintRecipes.class).current())
                  .isEqualTo("v2");
              assertThat(executeOnce(context.getBean(Idempotency.class), "create_payment"))
                  .isInstanceOf(Outcome.Executed.class);
            });
    runner
        .withPropertyValues("idemkit.protection.encryption.enabled=true")
        .run(context -> assertThat(context).hasFailed());
  }

  @Test
  @org.junit.jupiter.api.extension.ExtendWith(
      org.springframework.boot.test.system.OutputCaptureExtension.class)
  void masterKeysWithoutEncryptionTurnedOnSayThatAnswersAreStoredInTheClear(
      org.springframework.boot.test.system.CapturedOutput output) {
    runner
        .withPropertyValues(
            "idemkit.protection.encryption.master-keys.mk="
                + dev.idemkit.StaticKeyProvider.newKeyBase64(),
            "idemkit.protection.encryption.current-master-key=mk")
        .run(
            context -> {
              assertThat(context.getBean(dev.idemkit.DataProtection.class).encrypts()).isFalse();
              // Read-only: what was sealed while encryption was on still opens.
              assertThat(context.getBean(dev.idemkit.DataProtection.class).decrypts()).isTrue();
              assertThat(output)
                  .contains("idemkit.protection.encryption.enabled is not true")
                  .contains("stored in the clear")
                  .contains("still opened with these keys (read-only)");
            });
    runner
        .withPropertyValues(
            "idemkit.protection.encryption.master-keys.only="
                + dev.idemkit.StaticKeyProvider.newKeyBase64())
        .run(
            context ->
                assertThat(context.getBean(dev.idemkit.DataProtection.class).decrypts()).isTrue());
    runner.run(
        context ->
            assertThat(context.getBean(dev.idemkit.DataProtection.class).decrypts()).isFalse());
  }

  /**
   * Encryption turned off, master keys kept: an answer sealed while it was on still replays through
   * the starter's engine, a new one is stored in the clear. Without the keys the sealed one is a
   * 500 whose log names what to configure, and nothing runs again.
   */
  @Test
  void encryptionTurnedOffWithItsKeysKeptStillReplaysWhatItSealed() throws Exception {
    // A schema of its own: the class's database holds other tests' data keys.
    String schema = "encryption_off_" + UUID.randomUUID().toString().replace("-", "");
    String url;
    try (var c = database.dataSource().getConnection();
        var s = c.createStatement()) {
      s.execute("create schema " + schema);
      url = c.getMetaData().getURL();
    }
    String[] keys = {
      "idemkit.protection.encryption.master-keys.mk-off="
          + dev.idemkit.StaticKeyProvider.newKeyBase64(),
      "idemkit.protection.encryption.current-master-key=mk-off"
    };
    ScopedKey sealed = ScopedKey.of("tenant-off", "create_payment", "sealed");
    ScopedKey clear = ScopedKey.of("tenant-off", "create_payment", "clear");
    AtomicInteger runs = new AtomicInteger();
    try (HikariDataSource own = new HikariDataSource()) {
      own.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema);
      own.setUsername(((HikariDataSource) database.dataSource()).getUsername());
      own.setPassword(((HikariDataSource) database.dataSource()).getPassword());
      ApplicationContextRunner onOwnSchema =
          new ApplicationContextRunner()
              .withConfiguration(TRANSACTIONS)
              .withConfiguration(IDEMKIT)
              .withPropertyValues(SECRET)
              .withBean(DataSource.class, () -> new DelegatingDataSource(own));
      onOwnSchema
          .withPropertyValues(keys)
          .withPropertyValues("idemkit.protection.encryption.enabled=true")
          .run(
              context -> answer(context.getBean(Idempotency.class), sealed, "sealed_marker", runs));
      String sealedBody = body(own, "sealed");
      assertThat(sealedBody).doesNotContain("sealed_marker");

      onOwnSchema
          .withPropertyValues(keys)
          .run(
              context -> {
                Idempotency off = context.getBean(Idempotency.class);
                assertThat(answer(off, sealed, "again", runs)).isEqualTo("sealed_marker");
                assertThat(answer(off, clear, "clear_marker", runs)).isEqualTo("clear_marker");
              });
      assertThat(body(own, "clear")).isEqualTo("clear_marker");
      assertThat(body(own, "sealed")).isEqualTo(sealedBody);

      onOwnSchema.run(
          context ->
              assertThatThrownBy(
                      () -> answer(context.getBean(Idempotency.class), sealed, "again", runs))
                  .isInstanceOfSatisfying(
                      dev.idemkit.RecordUnreadableException.class,
                      e ->
                          assertThat(e.getMessage())
                              .contains("no master keys are configured here")));
    }
    assertThat(runs).hasValue(2);
  }

  /** The stored body of tenant-off's record {@code key}, as text. */
  private static String body(DataSource dataSource, String key) throws Exception {
    try (var c = dataSource.getConnection();
        var ps =
            c.prepareStatement(
                "select response_body from idemkit_record where tenant = 'tenant-off' and"
                    + " idem_key = ?")) {
      ps.setString(1, key);
      try (var rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return new String(rs.getBytes(1), java.nio.charset.StandardCharsets.ISO_8859_1);
      }
    }
  }

  /**
   * Executes {@code id} (or replays it) with an answer whose body is {@code body}; claimed first,
   * so that {@code runs} counts the runs that committed (a replay runs nothing).
   */
  private static String answer(
      Idempotency idempotency, ScopedKey id, String body, AtomicInteger runs) {
    Outcome outcome =
        idempotency.execute(
            new dev.idemkit.IdempotentRequest(
                id, dev.idemkit.Fingerprint.of(Map.of("k", "v")), Duration.ofHours(1)),
            LocalOperation.claimingFirst(
                ctx -> {
                  runs.incrementAndGet();
                  return OperationResult.success(
                      StoredResponse.of(
                          201, Map.of(), body.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                }));
    return new String(
        outcome.storedResponse().orElseThrow().body(), java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * A redaction set by an environment variable whose operation name has an underscore is not bound
   * (Spring reads it as other keys): the start stops naming the variable, instead of storing the
   * security code. One whose name an environment variable can spell is bound, and starts.
   */
  @Test
  void aPerOperationSettingAnEnvironmentVariableCannotSpellStopsTheStart() {
    runner
        .withInitializer(
            environmentVariables(
                java.util.Map.of("IDEMKIT_PROTECTION_REDACT_CREATE_PAYMENT_DROP", "card.cvc")))
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "Environment variable IDEMKIT_PROTECTION_REDACT_CREATE_PAYMENT_DROP cannot"
                            + " set a per-operation setting")
                    .hasMessageContaining("SPRING_APPLICATION_JSON"));
    runner
        .withInitializer(
            environmentVariables(
                java.util.Map.of(
                    "IDEMKIT_PROTECTION_REDACT_PAYMENT_DROP", "card.cvc",
                    "IDEMKIT_PROTECTION_REPLAYMODES_REFUND", "OUTCOME")))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(
                      context
                          .getBean(IdemkitProperties.class)
                          .getProtection()
                          .getRedact()
                          .get("payment")
                          .getDrop())
                  .containsExactly("card.cvc");
            });
  }

  /** The context's environment variables are {@code variables} (and no others). */
  private static org.springframework.context.ApplicationContextInitializer<
          org.springframework.context.ConfigurableApplicationContext>
      environmentVariables(java.util.Map<String, Object> variables) {
    return ctx ->
        ctx.getEnvironment()
            .getPropertySources()
            .replace(
                "systemEnvironment",
                new org.springframework.core.env.SystemEnvironmentPropertySource(
                    "systemEnvironment", variables));
  }

  @Test
  void badKeyMaterialStopsTheStartNamingTheProperty() {
    String good = dev.idemkit.StaticKeyProvider.newKeyBase64();
    String master = "idemkit.protection.encryption.master-keys.mk=";
    String[][] cases = {
      {master + "not*base64", "idemkit.protection.encryption.master-keys.mk is not base64"},
      {master + "MDEyMzQ1Njc4OWFiY2RlZg==", "idemkit.protection.encryption.master-keys.mk must be"},
      {
        master + good + ",idemkit.protection.encryption.current-master-key=mk9",
        "idemkit.protection.encryption.current-master-key=mk9 names no key"
      },
      {
        "idemkit.protection.fingerprint.hmac-keys.fk=abc*",
        "idemkit.protection.fingerprint.hmac-keys.fk is not base64"
      },
      {
        "idemkit.protection.fingerprint.hmac-keys.fk=MDEyMzQ1Njc4OWFiY2RlZg==",
        "idemkit.protection.fingerprint.hmac-keys.fk: an HMAC key must have at least 32 bytes"
      },
      {
        "idemkit.protection.fingerprint.current-hmac-key=fk9",
        "idemkit.protection.fingerprint.current-hmac-key=fk9 names no key"
      },
      {
        "idemkit.issued-keys.secret=too-short",
        "idemkit.issued-keys.secret holds 9 bytes; the issued-key secret must have at least 16"
      },
    };
    for (String[] c : cases) {
      java.util.List<String> values = new java.util.ArrayList<>(java.util.List.of(c[0].split(",")));
      if (c[0].startsWith(master)) {
        values.add("idemkit.protection.encryption.enabled=true");
        if (!c[0].contains("current-master-key")) {
          values.add("idemkit.protection.encryption.current-master-key=mk");
        }
      }
      runner
          .withPropertyValues(values.toArray(String[]::new))
          .run(
              context ->
                  assertThat(context)
                      .as(c[0])
                      .getFailure()
                      .rootCause()
                      .isInstanceOf(KeySettingException.class)
                      .hasMessageContaining(c[1]));
    }
  }
}
