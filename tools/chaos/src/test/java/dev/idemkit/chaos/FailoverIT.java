package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bounded failover run: the payments database on a primary with a synchronous standby, both
 * instances on a multi-host URL, and a nemesis that fails the database over ({@code kill -9} of the
 * primary's server processes, the standby promoted, the old primary rebuilt as the new standby) and
 * cuts connections in turn: nothing acknowledged is lost, nothing is done twice, and no key's
 * answer changes. Needs the machine's PostgreSQL 15 binaries ({@link
 * ReplicatedPostgres#MACHINE_BINARIES}); {@code -Didemkit.chaos.failover.duration=PT5M} makes it
 * longer (see docs/proof.md).
 */
class FailoverIT {

  @Test
  void withSynchronousReplicationAFailoverLosesAndDuplicatesNothing() throws Exception {
    Outcome outcome =
        OwnDatabaseRun.run(
            "idemkit.chaos.failover.duration",
            "PT40S",
            "replicated-sync",
            List.of("failover", "terminate-connections"),
            () -> Cluster.primaryAndStandby(Replication.SYNCHRONOUS));

    OwnDatabaseRun.assertNothingLostDuplicatedOrChanged(outcome);
    assertThat(outcome.count("failover")).as("failovers").isGreaterThanOrEqualTo(2);
    assertThat(outcome.resultLine()).contains(" failovers=" + outcome.count("failover") + " ");
  }
}
