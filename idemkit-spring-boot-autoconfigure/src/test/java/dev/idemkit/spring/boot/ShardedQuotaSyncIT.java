package dev.idemkit.spring.boot;

import static dev.idemkit.spring.boot.TenantShardsIT.createShardDatabases;
import static dev.idemkit.spring.boot.TenantShardsIT.dropDatabases;
import static dev.idemkit.spring.boot.TenantShardsIT.on;
import static dev.idemkit.spring.boot.TenantShardsIT.plain;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.Quotas;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.JdbcTransactions;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The live-records quota of a tenant on a shard that is not the one the instances share their
 * counts through (two databases on the machine's PostgreSQL): one instance leaves the tenant's
 * limit of operations awaiting recovery on its shard, and another instance, after an exchange,
 * refuses the tenant's next operation with {@code live_records}, while a tenant of the counts'
 * shard is still admitted. With the store's own exchange, which counts live records only on the
 * shard it runs on, the second instance admitted it.
 */
class ShardedQuotaSyncIT {

  private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  private static final String DB_A = "idemkit_quota_shard_a_" + SUFFIX;
  private static final String DB_B = "idemkit_quota_shard_b_" + SUFFIX;
  private static final Duration TTL = Duration.ofHours(1);

  private static TenantShards shards;

  @BeforeAll
  static void databases() throws SQLException {
    createShardDatabases(DB_A, DB_B);
    IdemkitSchema.migrate(plain(DB_A));
    IdemkitSchema.migrate(plain(DB_B));
    shards = new TenantShards(Map.of("a", plain(DB_A), "b", plain(DB_B)));
  }

  @AfterAll
  static void drop() throws SQLException {
    dropDatabases(DB_A, DB_B);
  }

  /** An instance: its own engine, on the shards' store with the sharded exchange. */
  private static Idempotency instance() {
    IdempotencyStore store = PostgresIdempotencyStore.builder(JdbcTransactions.of(shards)).build();
    return Idempotency.create(
        ShardedQuotaSync.wrap(store, shards, "a"),
        IdempotencyConfig.builder()
            .lease(Duration.ofSeconds(30))
            .defaultTtl(TTL)
            .quotas(new Quotas(0, 2))
            .build());
  }

  /** A payment whose provider's answer is lost: its record stays live, awaiting recovery. */
  private static final PhasedOperation<Map<String, String>> LOST_ANSWER =
      PhasedOperation.builder()
          .local("CREATED", (ctx, d) -> Step.next(d))
          .external(
              "CHARGED",
              call ->
                  call.call((ctx, d) -> CallResult.<Map<String, String>>unknown("timed out"))
                      .farSideDeduplicatesByKey())
          .complete(
              (ctx, d) ->
                  OperationResult.success(
                      StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8))));

  private static Outcome pay(Idempotency instance, String shard, String tenant) throws Exception {
    ScopedKey key = ScopedKey.of(tenant, "pay", UUID.randomUUID().toString());
    return shards.on(
        shard,
        () ->
            instance.execute(
                new IdempotentRequest(key, Fingerprint.of(Map.of("amount", "10.00")), TTL),
                LOST_ANSWER));
  }

  @Test
  void aTenantsLiveRecordsOnAnotherShardCountForEveryInstance() throws Exception {
    Idempotency first = instance();
    Idempotency second = instance();
    String onB = "on-b-" + SUFFIX;
    String onA = "on-a-" + SUFFIX;

    assertThat(pay(first, "b", onB)).isNotInstanceOf(Outcome.QuotaExceeded.class);
    assertThat(pay(first, "b", onB)).isNotInstanceOf(Outcome.QuotaExceeded.class);
    assertThat(
            on(DB_B)
                .queryForObject(
                    "select count(*) from idemkit_record where tenant = ?"
                        + " and recovery_due is not null",
                    Long.class,
                    onB))
        .as("live on shard b")
        .isEqualTo(2);

    second.syncQuotas(); // the worker's exchange: it binds its shards itself
    Outcome refused = pay(second, "b", onB);
    assertThat(refused).isInstanceOf(Outcome.QuotaExceeded.class);
    assertThat(((Outcome.QuotaExceeded) refused).quota()).isEqualTo("live_records");
    assertThat(
            on(DB_B)
                .queryForObject(
                    "select count(*) from idemkit_record where tenant = ?", Long.class, onB))
        .as("a refused key leaves no record")
        .isEqualTo(2);

    assertThat(pay(second, "a", onA)).isNotInstanceOf(Outcome.QuotaExceeded.class);
  }
}
