package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bounded run of tenants moving between shards: the payments on two databases ({@code
 * --database shards}, four tenants), the nemesis moving a tenant to the other shard through the
 * service's operator endpoint, terminating the database connections and killing an instance, in
 * turn. At least two moves happen; nothing acknowledged is lost, nothing is done twice, no key's
 * answer changes across the moves, and no request is answered with a server error (a moving
 * tenant's is a 503 with Retry-After); the accounting reads both shards. {@code
 * -Didemkit.chaos.shards.duration=PT2M} makes it longer (see docs/proof.md).
 */
class ShardsIT {

  static final List<String> FAULTS = List.of("move-tenant", "terminate-connections", "kill");

  @Test
  void tenantsMovedBetweenShardsUnderFaultsLoseAndDuplicateNothing() throws Exception {
    Path out = Path.of(System.getProperty("idemkit.chaos.out", "target/chaos"));
    Duration duration =
        Duration.parse(System.getProperty("idemkit.chaos.shards.duration", "PT60S"));
    ChaosRun.Config config =
        ChaosRun.Config.defaults(ChaosIT.serviceJar(), out)
            .withDuration(duration)
            .withFaults("shards", FAULTS);
    Outcome outcome;
    try (Cluster cluster = new Cluster(config.serviceJar(), out.resolve("logs"), ChaosRun.FAULTS)) {
      outcome = ChaosRun.run(cluster, config);
    }

    OwnDatabaseRun.assertNothingLostDuplicatedOrChanged(outcome);
    assertThat(outcome.count("move-tenant")).as("tenant moves").isGreaterThanOrEqualTo(2);
    assertThat(outcome.resultLine())
        .contains(" server_errors=0 ")
        .endsWith(" tenant_moves=" + outcome.count("move-tenant"));
  }
}
