package dev.idemkit.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spring.boot.IdemkitAutoConfiguration.IdemkitSchemaInitializer;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Tenants on shards, when {@code idemkit.shards} names at least one (docs/scaling.md): {@link
 * TenantShards} becomes the application's DataSource (Spring Boot's own then backs off), the {@link
 * TenantDirectory} says where each tenant is, each web request is bound to its tenant's shard, and
 * the starter's workers run one lane per shard. Without the property nothing here exists: one
 * database pays no routing, no fence trigger and no directory.
 */
@AutoConfiguration(before = {DataSourceAutoConfiguration.class, IdemkitAutoConfiguration.class})
@ConditionalOnClass({AbstractRoutingDataSource.class, HikariDataSource.class})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@Conditional(IdemkitShardsAutoConfiguration.ShardsConfigured.class)
@EnableConfigurationProperties(IdemkitShardsProperties.class)
public class IdemkitShardsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public TenantShards tenantShards(IdemkitShardsProperties properties) {
    String self = properties.getRegions().getSelf();
    Map<String, DataSource> shards = new LinkedHashMap<>();
    Map<String, String> regions = new LinkedHashMap<>();
    properties
        .getShards()
        .forEach(
            (name, shard) -> {
              if (shard.getRegion() != null) {
                regions.put(name, shard.getRegion());
              }
              if (shard.getUrl() == null) {
                if (self == null || shard.getRegion() == null) {
                  throw new IllegalStateException("idemkit.shards." + name + ".url is missing");
                }
                return;
              }
              HikariDataSource pool = new HikariDataSource();
              pool.setPoolName("idemkit-shard-" + name);
              pool.setJdbcUrl(shard.getUrl());
              pool.setUsername(shard.getUsername());
              pool.setPassword(shard.getPassword());
              pool.setMaximumPoolSize(shard.getMaximumPoolSize());
              shards.put(name, pool);
            });
    for (String region : regions.values()) {
      if (self != null
          && !region.equals(self)
          && !properties.getRegions().getUrls().containsKey(region)) {
        throw new IllegalStateException(
            "idemkit.regions.urls." + region + " is missing: a shard is in that region");
      }
    }
    return new TenantShards(shards, regions, self);
  }

  /**
   * The directory, read once before the first request; after Idemkit's schema is on every shard,
   * and with the fence installed on each (the fence triggers need the tables).
   */
  @Bean
  @ConditionalOnMissingBean
  public TenantDirectory tenantDirectory(
      TenantShards shards,
      IdemkitShardsProperties properties,
      ObjectProvider<IdemkitSchemaInitializer> schema)
      throws SQLException {
    schema.ifAvailable(s -> {});
    String directory = properties.getShardsDirectory();
    if (directory != null && !shards.names().contains(directory)) {
      throw new IllegalStateException(
          "idemkit.shards-directory names no shard with a url here: "
              + directory
              + "; shards: "
              + shards.names());
    }
    for (String shard : shards.local()) {
      TenantFence.install(shards.shard(shard));
    }
    return new TenantDirectory(shards, directory, properties.getShardsDirectoryRefresh());
  }

  /**
   * The starter's workers (recovery, cleanup, inbox cleanup) with one lane per shard this instance
   * serves, so a shard that is down stops only its own lane; the quota exchange in one lane, since
   * the instances' new-key counts are shared through one database, the directory shard (with
   * regions, when the directory is in another region, the first shard of this one: the counts are
   * then shared within the region, and no worker crosses a region), while it counts live records on
   * every shard ({@link ShardedQuotaSync}, which every {@link IdempotencyStore} bean's exchange is
   * wrapped in).
   */
  @Bean
  public static BeanPostProcessor idemkitWorkersPerShard(
      ObjectProvider<TenantShards> shards, ObjectProvider<TenantDirectory> directory) {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof PollingLifecycle worker && !(bean instanceof TenantDirectory)) {
          TenantShards all = shards.getObject();
          String counts = ShardedQuotaSync.countsShard(all, directory.getObject().directoryShard());
          worker.runPerShard(
              all,
              !(bean instanceof IdempotencyQuotaWorker)
                  ? all.local()
                  : counts == null ? List.of() : List.of(counts));
        }
        if (bean instanceof IdempotencyStore store) {
          TenantShards all = shards.getObject();
          return ShardedQuotaSync.wrap(
              store,
              all,
              ShardedQuotaSync.countsShard(all, directory.getObject().directoryShard()));
        }
        return bean;
      }
    };
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(WebMvcConfigurer.class)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  static class Web {
    @Bean
    WebMvcConfigurer idemkitTenantShardBinding(
        TenantShards shards,
        TenantDirectory directory,
        IdemkitShardsProperties properties,
        ObjectProvider<IdempotencyTenantResolver> tenants) {
      TenantShardBinding binding =
          new TenantShardBinding(
              shards,
              directory,
              properties.getRegions().getUrls(),
              () -> tenants.getIfAvailable(IdempotencyTenantResolver::principalName));
      return new WebMvcConfigurer() {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
          registry.addInterceptor(binding);
        }
      };
    }
  }

  /** Whether {@code idemkit.shards} names a shard. */
  static final class ShardsConfigured implements Condition {
    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
      return in(context.getEnvironment());
    }

    static boolean in(Environment environment) {
      return Binder.get(environment)
          .bind("idemkit.shards", Bindable.mapOf(String.class, IdemkitShardsProperties.Shard.class))
          .map(shards -> !shards.isEmpty())
          .orElse(false);
    }
  }
}
