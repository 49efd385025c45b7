package dev.idemkit.spring.boot;

import static dev.idemkit.spring.boot.TenantShardsIT.SERVER;
import static dev.idemkit.spring.boot.TenantShardsIT.TENANT_TABLES;
import static dev.idemkit.spring.boot.TenantShardsIT.count;
import static dev.idemkit.spring.boot.TenantShardsIT.path;
import static dev.idemkit.spring.boot.TenantShardsIT.plain;
import static dev.idemkit.spring.boot.TenantShardsIT.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two regions in one JVM (docs/regions.md): two web applications on two ports, region "eu" with
 * shard eu (its database) and region "us" with shard us (its own), the directory on eu, read by us
 * in the background. A tenant is served in its home region and redirected there (307, nothing
 * written) from the other; a planned move takes its home and every stored answer to the other
 * region; on a failover its home moves with its promoted database, and the failed region, back with
 * no shard, redirects. The application is {@link TenantShardsIT}'s (orders, their records and
 * events).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RegionsIT {

  private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  private static final String DB_EU = "idemkit_region_eu_" + SUFFIX;
  private static final String DB_US = "idemkit_region_us_" + SUFFIX;

  private static int euPort;
  private static int usPort;
  private static ConfigurableApplicationContext eu;
  private static ConfigurableApplicationContext us;

  /** The operator's process: it reaches both databases, as a move needs. */
  private static TenantShards operatorShards;

  private static TenantDirectory operatorDirectory;

  @BeforeAll
  static void startRegions() throws Exception {
    TenantShardsIT.createShardDatabases(DB_EU, DB_US);
    euPort = freePort();
    usPort = freePort();
    eu = start(euPort, "eu", Map.of("eu", "eu", "us", "us"), List.of("eu"));
    us = start(usPort, "us", Map.of("eu", "eu", "us", "us"), List.of("eu", "us"));
    operatorShards = new TenantShards(Map.of("eu", plain(DB_EU), "us", plain(DB_US)));
    operatorDirectory = new TenantDirectory(operatorShards, "eu", Duration.ofSeconds(1));
  }

  @AfterAll
  static void stopRegions() throws SQLException {
    for (ConfigurableApplicationContext region : new ConfigurableApplicationContext[] {eu, us}) {
      if (region != null) {
        region.close();
      }
    }
    TenantShardsIT.dropDatabases(DB_EU, DB_US);
  }

  /**
   * An instance of {@code self} on {@code port}.
   *
   * @param regions each shard's region
   * @param pooled the shards this instance has a url for: its region's, and the directory's (eu)
   */
  private static ConfigurableApplicationContext start(
      int port, String self, Map<String, String> regions, List<String> pooled) {
    Map<String, Object> properties = new LinkedHashMap<>();
    properties.put("server.port", port);
    properties.put("idemkit.issued-keys.secret", "a-secret-both-regions-share");
    properties.put("idemkit.regions.self", self);
    properties.put("idemkit.regions.urls.eu", base(euPort));
    properties.put("idemkit.regions.urls.us", base(usPort));
    properties.put("idemkit.shards-directory", "eu");
    properties.put("idemkit.shards-directory-refresh", "50ms");
    regions.forEach(
        (shard, region) -> properties.put("idemkit.shards." + shard + ".region", region));
    for (String shard : pooled) {
      properties.put(
          "idemkit.shards." + shard + ".url", SERVER + (shard.equals("eu") ? DB_EU : DB_US));
      properties.put("idemkit.shards." + shard + ".username", "postgres");
    }
    return new SpringApplicationBuilder(TenantShardsIT.App.class).properties(properties).run();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static String base(int port) {
    return "http://localhost:" + port;
  }

  private static HttpResponse<String> post(int port, String tenant, String key, int amount)
      throws Exception {
    return send(URI.create(base(port) + path(tenant, key, amount)), tenant, key);
  }

  /** The operator moves {@code tenant} to {@code shard}, with the application's orders. */
  private static void operatorMove(String tenant, String shard) throws Exception {
    new TenantMove(
            operatorShards, operatorDirectory, List.of(new TenantMove.Table("orders", "tenant")))
        .move(tenant, shard);
  }

  /** A new tenant named from {@code name}, listed on {@code shard}, as both regions read it. */
  private static String placed(String name, String shard) throws Exception {
    String tenant = name + "-" + UUID.randomUUID().toString().substring(0, 6);
    operatorMove(tenant, shard);
    awaitRead(tenant, shard, eu, us);
    return tenant;
  }

  /** Waits until each of {@code regions} has read {@code tenant} on {@code shard}, not moving. */
  private static void awaitRead(
      String tenant, String shard, ConfigurableApplicationContext... regions)
      throws InterruptedException {
    for (ConfigurableApplicationContext region : regions) {
      TenantDirectory read = region.getBean(TenantDirectory.class);
      await(
          () ->
              read.placement(tenant).shard().equals(shard)
                  && read.placement(tenant).state() == TenantDirectory.State.ACTIVE);
    }
  }

  /** Polls {@code done} until it holds, at most a minute. */
  private static void await(BooleanSupplier done) throws InterruptedException {
    for (int i = 0; i < 6000 && !done.getAsBoolean(); i++) {
      Thread.sleep(10);
    }
    assertThat(done.getAsBoolean()).as("awaited for a minute").isTrue();
  }

  private static void assertRedirected(
      HttpResponse<String> answer, String region, int homePort, String pathAndQuery) {
    assertThat(answer.statusCode()).isEqualTo(307);
    assertThat(answer.headers().firstValue("Location")).contains(base(homePort) + pathAndQuery);
    assertThat(answer.body())
        .contains("\"errorCode\":\"TENANT_HOMED_ELSEWHERE\"")
        .contains("region " + region);
  }

  private static void assertAllRowsOn(String home, String away, String tenant, long orders) {
    for (String table : TENANT_TABLES) {
      assertThat(count(home, table, tenant))
          .as("%s of %s at home", table, tenant)
          .isEqualTo(orders);
      assertThat(count(away, table, tenant)).as("%s of %s away", table, tenant).isZero();
    }
  }

  @Test
  @Order(1)
  void aTenantIsServedInItsHomeRegionAndRedirectedThereFromTheOther() throws Exception {
    String inEu = placed("in-eu", "eu");
    String inUs = placed("in-us", "us");

    HttpResponse<String> atUs =
        send(URI.create(base(usPort) + path(inEu, "k1", 5) + "?via=us"), inEu, "k1");
    assertRedirected(atUs, "eu", euPort, path(inEu, "k1", 5) + "?via=us");
    for (String table : TENANT_TABLES) {
      assertThat(count(DB_US, table, inEu)).as("%s written in us", table).isZero();
    }

    HttpResponse<String> followed =
        send(URI.create(atUs.headers().firstValue("Location").orElseThrow()), inEu, "k1");
    assertThat(followed.statusCode()).isEqualTo(201);
    assertAllRowsOn(DB_EU, DB_US, inEu, 1);

    assertThat(post(usPort, inUs, "k1", 7).statusCode()).isEqualTo(201);
    assertAllRowsOn(DB_US, DB_EU, inUs, 1);
    assertRedirected(post(euPort, inUs, "k2", 7), "us", usPort, path(inUs, "k2", 7));
    assertAllRowsOn(DB_US, DB_EU, inUs, 1);
  }

  @Test
  @Order(2)
  void aPlannedMoveTakesTheHomeAndEveryAnswerToTheOtherRegion() throws Exception {
    String tenant = placed("moving", "eu");
    HttpResponse<String> first = post(euPort, tenant, "k1", 5);
    assertThat(first.statusCode()).isEqualTo(201);

    operatorMove(tenant, "us");

    await(
        () -> {
          try {
            return post(euPort, tenant, "k1", 5).statusCode() == 307;
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    assertRedirected(post(euPort, tenant, "k1", 5), "us", usPort, path(tenant, "k1", 5));
    awaitRead(tenant, "us", us);

    HttpResponse<String> retry = post(usPort, tenant, "k1", 5);
    assertThat(retry.statusCode()).isEqualTo(first.statusCode());
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(post(usPort, tenant, "k2", 6).statusCode()).isEqualTo(201);
    assertAllRowsOn(DB_US, DB_EU, tenant, 2);
  }

  /**
   * Region eu fails; its database's standby in us is promoted (here: shard eu's database stands for
   * it), and region us's instances restart with {@code idemkit.shards.eu.region=us}: the tenants of
   * shard eu are served in us with their stored answers.
   */
  @Test
  @Order(3)
  void onFailoverTheHomeMovesWithThePromotedDatabase() throws Exception {
    String tenant = placed("failover", "eu");
    String inUs = placed("stays-in-us", "us");
    HttpResponse<String> first = post(euPort, tenant, "k1", 5);
    assertThat(first.statusCode()).isEqualTo(201);
    assertRedirected(post(usPort, tenant, "k1", 5), "eu", euPort, path(tenant, "k1", 5));

    eu.close();
    assertThatThrownBy(() -> post(euPort, tenant, "k1", 5)).isInstanceOf(IOException.class);

    us.close();
    us = start(usPort, "us", Map.of("eu", "us", "us", "us"), List.of("eu", "us"));

    HttpResponse<String> retry = post(usPort, tenant, "k1", 5);
    assertThat(retry.statusCode()).isEqualTo(first.statusCode());
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(post(usPort, tenant, "k2", 6).statusCode()).isEqualTo(201);
    assertAllRowsOn(DB_EU, DB_US, tenant, 2);
    assertThat(post(usPort, inUs, "k1", 7).statusCode()).isEqualTo(201);
    assertAllRowsOn(DB_US, DB_EU, inUs, 1);

    eu = start(euPort, "eu", Map.of("eu", "us", "us", "us"), List.of("eu"));
    assertRedirected(post(euPort, tenant, "k1", 5), "us", usPort, path(tenant, "k1", 5));
    assertRedirected(post(euPort, inUs, "k2", 7), "us", usPort, path(inUs, "k2", 7));
    assertAllRowsOn(DB_EU, DB_US, tenant, 2);
  }
}
