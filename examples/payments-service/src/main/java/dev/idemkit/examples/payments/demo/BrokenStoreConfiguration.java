package dev.idemkit.examples.payments.demo;

import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Chaos-run wiring only: with {@code payments.demo.broken-store=find-then-insert} or {@code
 * =no-fencing}, the service runs on a deliberately broken store ({@link BrokenStores}) so that the
 * chaos run can show its checker catching the bug. Absent the property (always, outside that run),
 * this configuration does not exist and the auto-configured store is used.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "payments.demo", name = "broken-store")
public class BrokenStoreConfiguration {

  private static final Logger log = LoggerFactory.getLogger(BrokenStoreConfiguration.class);

  @Bean
  IdempotencyStore idempotencyStore(
      JdbcTransactions transactions,
      @Value("${payments.demo.broken-store}") String variant,
      @Value("${payments.demo.broken-store-window:PT0.3S}") Duration window) {
    IdempotencyStore real = PostgresIdempotencyStore.builder(transactions).build();
    IdempotencyStore broken =
        switch (variant) {
          case "find-then-insert" -> BrokenStores.findThenInsert(real, window);
          case "no-fencing" -> BrokenStores.noFencing(real);
          default ->
              throw new IllegalArgumentException(
                  "payments.demo.broken-store is find-then-insert or no-fencing, not " + variant);
        };
    log.warn(
        "DELIBERATELY BROKEN idempotency store '{}' (payments.demo.broken-store): for the chaos"
            + " run's checker only; this service can now pay twice",
        variant);
    return broken;
  }
}
