package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idemkit.testing.postgres.ReplicatedPostgres;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bounded run of the faults beyond a single process's: the payments database frozen ({@code
 * SIGSTOP} of its server) and the network to it cut, each for longer than a client's request, the
 * instances' clocks stepped minutes apart, and an instance killed while it shuts down. Each happens
 * at least once; nothing acknowledged is lost, nothing is done twice, no key's answer changes, and
 * no request is answered with a server error (a fault is a 503 with Retry-After or a timeout).
 * Needs the machine's PostgreSQL 15 binaries (the database is on a server of the run's own) and
 * {@code libfaketime}; {@code -Didemkit.chaos.faults.duration=PT5M} makes it longer (see
 * docs/proof.md).
 */
class FaultsIT {

  static final List<String> FAULTS =
      List.of("freeze-database", "cut-network", "skew-clocks", "kill-during-shutdown");

  @Test
  void aFrozenDatabaseACutNetworkSkewedClocksAndAKilledShutdownLoseAndDuplicateNothing()
      throws Exception {
    assumeTrue(Cluster.findLibfaketime().isPresent(), ChaosOptions.NO_LIBFAKETIME);
    Outcome outcome =
        OwnDatabaseRun.run(
            "idemkit.chaos.faults.duration",
            "PT75S",
            "own",
            FAULTS,
            ReplicatedPostgres::startPrimary);

    OwnDatabaseRun.assertNothingLostDuplicatedOrChanged(outcome);
    for (String fault : FAULTS) {
      assertThat(outcome.count(fault)).as(fault).isGreaterThanOrEqualTo(1);
    }
    assertThat(outcome.resultLine())
        .contains(" freezes=" + outcome.count("freeze-database") + " ")
        .contains(" network_cuts=" + outcome.count("cut-network") + " ")
        .contains(" clock_skews=" + outcome.count("skew-clocks") + " ")
        .contains(" shutdown_kills=" + outcome.count("kill-during-shutdown") + " ")
        .endsWith(" server_errors=0 tenant_moves=0");
  }
}
