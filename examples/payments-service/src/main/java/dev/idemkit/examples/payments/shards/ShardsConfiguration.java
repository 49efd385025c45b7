package dev.idemkit.examples.payments.shards;

import dev.idemkit.spring.boot.TenantShards;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The service's lanes, and its migrations: with shards, Flyway runs on every shard (the {@code
 * DataSource} then belongs to no database), else on the one database, as Spring Boot would.
 */
@Configuration(proxyBeanMethods = false)
public class ShardsConfiguration {

  @Bean
  public Lanes lanes(DataSource dataSource, ObjectProvider<TenantShards> shards) {
    return new Lanes(dataSource, shards.getIfAvailable());
  }

  @Bean
  public FlywayMigrationStrategy migrateEveryShard(ObjectProvider<TenantShards> shards) {
    return flyway -> {
      TenantShards all = shards.getIfAvailable();
      if (all == null) {
        flyway.migrate();
      } else {
        all.migrateEach(flyway);
      }
    };
  }
}
