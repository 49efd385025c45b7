package dev.idemkit.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Tenants on shards (docs/scaling.md, "Tenants on shards"): off unless {@code idemkit.shards} names
 * a shard. Then each tenant's rows (business tables, records, outbox, inbox) live in one of these
 * PostgreSQL databases, and {@link TenantShards} becomes the application's DataSource.
 */
@ConfigurationProperties("idemkit")
public class IdemkitShardsProperties {

  /** The shards by name: {@code idemkit.shards.<name>.url} and so on. */
  private Map<String, Shard> shards = new LinkedHashMap<>();

  /** The shard whose {@code idemkit_tenant_shard} table says where each tenant is; empty: first. */
  private String shardsDirectory;

  /** How often each instance reads the tenant directory again. */
  private Duration shardsDirectoryRefresh = Duration.ofSeconds(1);

  public Map<String, Shard> getShards() {
    return shards;
  }

  public void setShards(Map<String, Shard> shards) {
    this.shards = shards;
  }

  public String getShardsDirectory() {
    return shardsDirectory;
  }

  public void setShardsDirectory(String shardsDirectory) {
    this.shardsDirectory = shardsDirectory;
  }

  public Duration getShardsDirectoryRefresh() {
    return shardsDirectoryRefresh;
  }

  public void setShardsDirectoryRefresh(Duration shardsDirectoryRefresh) {
    this.shardsDirectoryRefresh = shardsDirectoryRefresh;
  }

  /** One shard: a PostgreSQL database and its connection pool. */
  public static class Shard {
    /** JDBC URL of the shard's database. */
    private String url;

    private String username;
    private String password;

    /** The shard's pool size. */
    private int maximumPoolSize = 10;

    public String getUrl() {
      return url;
    }

    public void setUrl(String url) {
      this.url = url;
    }

    public String getUsername() {
      return username;
    }

    public void setUsername(String username) {
      this.username = username;
    }

    public String getPassword() {
      return password;
    }

    public void setPassword(String password) {
      this.password = password;
    }

    public int getMaximumPoolSize() {
      return maximumPoolSize;
    }

    public void setMaximumPoolSize(int maximumPoolSize) {
      this.maximumPoolSize = maximumPoolSize;
    }
  }
}
