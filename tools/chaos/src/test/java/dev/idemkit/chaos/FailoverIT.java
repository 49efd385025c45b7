package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.nio.file.Path;
import java.time.Duration;
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
    assumeTrue(
        ReplicatedPostgres.available(ReplicatedPostgres.MACHINE_BINARIES),
        "no PostgreSQL 15 binaries on this machine");
    Path out = Path.of(System.getProperty("idemkit.chaos.out", "target/chaos"));
    Duration duration =
        Duration.parse(System.getProperty("idemkit.chaos.failover.duration", "PT40S"));
    ChaosRun.Config config =
        ChaosRun.Config.defaults(ChaosIT.serviceJar(), out)
            .withDuration(duration)
            .withFaults("replicated-sync", List.of("failover", "terminate-connections"));

    Outcome outcome;
    try (Cluster cluster =
        new Cluster(
            config.serviceJar(),
            out.resolve("logs"),
            ChaosRun.FAULTS,
            Cluster.primaryAndStandby(Replication.SYNCHRONOUS))) {
      outcome = ChaosRun.run(cluster, config);
    }

    Accounting.Result a = outcome.accounting();
    assertThat(outcome.count("failover")).as("failovers").isGreaterThanOrEqualTo(2);
    assertThat(outcome.serverErrors()).as("answers 5xx other than 503").isEmpty();
    assertThat(a.anomalies()).isEmpty();
    assertThat(a.lost()).isZero();
    assertThat(a.duplicated()).isZero();
    assertThat(a.unexpected()).isZero();
    assertThat(a.changedAnswers()).isZero();
    assertThat(outcome.undrained()).isEmpty();
    assertThat(a.ok()).as("work got done").isGreaterThan(20);
    assertThat(outcome.resultLine()).contains(" failovers=" + outcome.count("failover") + " ");
  }
}
