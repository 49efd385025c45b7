package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Which shards an instance serves and knows, with and without regions; no connection is made. */
class TenantShardsTest {

  private static final DataSource EU = new PGSimpleDataSource();
  private static final DataSource US = new PGSimpleDataSource();

  @Test
  void withoutRegionsEveryShardIsServed() {
    TenantShards shards = new TenantShards(Map.of("a", EU, "b", US));

    assertThat(shards.names()).containsExactly("a", "b");
    assertThat(shards.world()).containsExactly("a", "b");
    assertThat(shards.local()).containsExactly("a", "b");
    assertThat(shards.region("a")).isNull();
    assertThat(TenantShards.each(shards)).containsExactlyInAnyOrder(EU, US);
  }

  @Test
  void anInstanceServesItsRegionsShardsAndKnowsTheOthers() {
    TenantShards inUs =
        new TenantShards(
            Map.of("eu", EU, "us", US), Map.of("eu", "eu", "us", "us", "ap", "ap"), "us");

    assertThat(inUs.names()).containsExactly("eu", "us");
    assertThat(inUs.world()).containsExactly("ap", "eu", "us");
    assertThat(inUs.local()).containsExactly("us");
    assertThat(inUs.region("ap")).isEqualTo("ap");
    assertThat(TenantShards.each(inUs)).containsExactly(US);
  }

  @Test
  void aRegionWithNoShardServesNone() {
    TenantShards inEu = new TenantShards(Map.of("eu", EU), Map.of("eu", "us"), "eu");

    assertThat(inEu.local()).isEmpty();
    assertThat(TenantShards.each(inEu)).isEmpty();
  }

  @Test
  void aShardOfThisRegionNeedsAPoolAndEveryShardARegion() {
    assertThatThrownBy(
            () -> new TenantShards(Map.of("eu", EU), Map.of("eu", "eu", "us", "us"), "us"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Shard us is in this instance's region us but has no url");
    assertThatThrownBy(() -> new TenantShards(Map.of("eu", EU, "us", US), Map.of("us", "us"), "us"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("every shard names its region");
    assertThatThrownBy(() -> new TenantShards(Map.of("eu", EU), Map.of("eu", "eu"), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("and only then");
  }

  @Test
  void theSettingsNameAUrlForEveryOtherRegionAndAPoolForEveryShardWithout() throws Exception {
    IdemkitShardsProperties properties = new IdemkitShardsProperties();
    properties.getRegions().setSelf("eu");
    properties.getShards().put("eu", shard("eu", "jdbc:postgresql://127.0.0.1:5432/eu"));
    properties.getShards().put("us", shard("us", null));
    assertThatThrownBy(() -> new IdemkitShardsAutoConfiguration().tenantShards(properties))
        .hasMessage("idemkit.regions.urls.us is missing: a shard is in that region");

    properties.getRegions().getUrls().put("us", "https://us.api.example.com");
    try (TenantShards shards = new IdemkitShardsAutoConfiguration().tenantShards(properties)) {
      assertThat(shards.names()).containsExactly("eu");
      assertThat(shards.world()).containsExactly("eu", "us");
    }

    properties.getRegions().setSelf(null);
    assertThatThrownBy(() -> new IdemkitShardsAutoConfiguration().tenantShards(properties))
        .hasMessage("idemkit.shards.us.url is missing");
  }

  private static IdemkitShardsProperties.Shard shard(String region, String url) {
    IdemkitShardsProperties.Shard shard = new IdemkitShardsProperties.Shard();
    shard.setRegion(region);
    shard.setUrl(url);
    return shard;
  }
}
