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

  /** Regions (docs/regions.md): off unless {@code idemkit.regions.self} is set. */
  private Regions regions = new Regions();

  public Regions getRegions() {
    return regions;
  }

  public void setRegions(Regions regions) {
    this.regions = regions;
  }

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

  /**
   * Where this instance runs and where the others answer: a tenant whose shard is in another region
   * is redirected there (307 {@code TENANT_HOMED_ELSEWHERE}).
   */
  public static class Regions {
    /** This instance's region; unset: no regions. */
    private String self;

    /** Each other region's public base URL ({@code https://eu.api.example.com}), by region. */
    private Map<String, String> urls = new LinkedHashMap<>();

    public String getSelf() {
      return self;
    }

    public void setSelf(String self) {
      this.self = self;
    }

    public Map<String, String> getUrls() {
      return urls;
    }

    public void setUrls(Map<String, String> urls) {
      this.urls = urls;
    }
  }

  /** One shard: a PostgreSQL database and its connection pool. */
  public static class Shard {
    /**
     * JDBC URL of the shard's database; unset for a shard of another region that does not hold the
     * directory (this instance has no pool for it).
     */
    private String url;

    /** The region the shard's database lives in; with {@code idemkit.regions.self} only. */
    private String region;

    private String username;
    private String password;

    /** The shard's pool size. */
    private int maximumPoolSize = 10;

    public String getRegion() {
      return region;
    }

    public void setRegion(String region) {
      this.region = region;
    }

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
