package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.payments.ProviderProperties;
import dev.idemkit.examples.payments.receipts.MailProperties;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spring.boot.IdemkitAutoConfiguration;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.json.JsonMapper;

/**
 * The demo's wiring: each switch and what it turns on. No class of the service names this package;
 * it is registered beside the service's code ({@code
 * META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}, like the
 * {@link DemoSecrets} guard in {@code META-INF/spring.factories}), and a deployment that sets the
 * provider's and the mail service's URLs and no demo switch gets none of its beans.
 *
 * <ul>
 *   <li>no {@code payments.provider.url}: the provider simulator in this process ({@link
 *       EmbeddedProvider}), the payments' requests sent to it ({@link EmbeddedProviderRequests}),
 *       and the {@code X-Provider-Fault} header ({@link ProviderFaultHeaderFilter});
 *   <li>no {@code payments.mail.url}: the mail simulator in this process ({@link EmbeddedMail});
 *   <li>{@code payments.faults.kill-at}: the crash points that kill this process ({@link
 *       CrashPoints}; the crash tests);
 *   <li>{@code payments.demo.broken-store}: a deliberately broken idempotency store ({@link
 *       BrokenStores}; the chaos run's proof that its checker catches the bug);
 *   <li>{@code payments.events.faults.lost-ack} or {@code .consumer-failure} above 0: lost
 *       acknowledgements and failing consumers in the event flow ({@link EventFaults});
 *   <li>the Spring profile {@code bench}: the benchmark's baseline endpoint ({@link
 *       BenchRawPaymentsController}, found by the service's component scan under that profile).
 * </ul>
 *
 * <p>Before the starter's auto-configuration, so that a broken store takes the place of its store.
 */
@AutoConfiguration(before = IdemkitAutoConfiguration.class)
public class DemoConfiguration {

  private static final Logger log = LoggerFactory.getLogger(DemoConfiguration.class);

  /** Demo mode for the provider: no {@code payments.provider.url}. */
  private static final String NO_PROVIDER_URL = "'${payments.provider.url:}'.isBlank()";

  @Bean
  @ConditionalOnExpression(NO_PROVIDER_URL)
  EmbeddedProvider embeddedProvider(
      ProviderProperties provider,
      DataSource dataSource,
      DataSourceProperties database,
      @Value("${server.port:8080}") int serverPort) {
    return new EmbeddedProvider(provider, dataSource, database, serverPort);
  }

  @Bean
  @ConditionalOnExpression(NO_PROVIDER_URL)
  EmbeddedProviderRequests embeddedProviderRequests(EmbeddedProvider embedded) {
    return new EmbeddedProviderRequests(embedded.baseUrl());
  }

  @Bean
  @ConditionalOnExpression(NO_PROVIDER_URL)
  ProviderFaultHeaderFilter providerFaultHeaderFilter() {
    return new ProviderFaultHeaderFilter();
  }

  @Bean
  @ConditionalOnExpression("'${payments.mail.url:}'.isBlank()")
  EmbeddedMail embeddedMail(
      MailProperties mail,
      DataSource dataSource,
      DataSourceProperties database,
      JsonMapper json,
      @Value("${server.port:8080}") int serverPort) {
    return new EmbeddedMail(mail, dataSource, database, json, serverPort);
  }

  /** Static: a post-processor of the store, made before the beans it processes. */
  @Bean
  @ConditionalOnProperty("payments.faults.kill-at")
  static CrashPoints crashPoints(@Value("${payments.faults.kill-at}") String killAt) {
    return new CrashPoints(killAt);
  }

  /** Static: a post-processor of the event flow's beans, made before them. */
  @Bean
  @ConditionalOnExpression(
      "${payments.events.faults.lost-ack:0} > 0 or ${payments.events.faults.consumer-failure:0} > 0")
  static EventFaults eventFaults(
      @Value("${payments.events.faults.lost-ack:0}") double lostAck,
      @Value("${payments.events.faults.consumer-failure:0}") double consumerFailure) {
    return new EventFaults(lostAck, consumerFailure);
  }

  @Bean
  @ConditionalOnProperty("payments.demo.broken-store")
  IdempotencyStore idempotencyStore(
      JdbcTransactions transactions,
      @Value("${payments.demo.broken-store}") String variant,
      @Value("${payments.demo.broken-store-window:PT0.3S}") Duration window) {
    IdempotencyStore real = PostgresIdempotencyStore.builder(transactions).build();
    IdempotencyStore broken =
        switch (variant) {
          case "find-then-insert" -> BrokenStores.findThenInsert(real, window);
          case "late-owner-overwrites" -> BrokenStores.lateOwnerOverwrites(real);
          default ->
              throw new IllegalArgumentException(
                  "payments.demo.broken-store is find-then-insert or late-owner-overwrites, not "
                      + variant);
        };
    log.warn(
        "DELIBERATELY BROKEN idempotency store '{}' (payments.demo.broken-store): for the chaos"
            + " run's checker only; this service can now pay twice",
        variant);
    return broken;
  }
}
