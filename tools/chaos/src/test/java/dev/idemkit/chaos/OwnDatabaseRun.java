package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idemkit.testing.postgres.ReplicatedPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * A bounded chaos run on database servers of the run's own (the machine's PostgreSQL 15 binaries;
 * the test is skipped without them), and what every such run must end with: nothing acknowledged
 * lost, nothing done twice, no key's answer changed, no server error, everything drained.
 */
final class OwnDatabaseRun {

  private OwnDatabaseRun() {}

  /**
   * Runs the given faults on {@code database} ({@code own}, {@code replicated-sync}…) for the
   * duration the system property {@code durationProperty} says, else {@code defaultDuration}.
   */
  static Outcome run(
      String durationProperty,
      String defaultDuration,
      String database,
      List<String> faults,
      Supplier<ReplicatedPostgres> servers)
      throws Exception {
    assumeTrue(
        ReplicatedPostgres.available(ReplicatedPostgres.MACHINE_BINARIES),
        "no PostgreSQL 15 binaries on this machine");
    Path out = Path.of(System.getProperty("idemkit.chaos.out", "target/chaos"));
    Duration duration = Duration.parse(System.getProperty(durationProperty, defaultDuration));
    ChaosRun.Config config =
        ChaosRun.Config.defaults(ChaosIT.serviceJar(), out)
            .withDuration(duration)
            .withFaults(database, faults);
    try (Cluster cluster =
        new Cluster(config.serviceJar(), out.resolve("logs"), ChaosRun.FAULTS, servers.get())) {
      return ChaosRun.run(cluster, config);
    }
  }

  /** Zero anomalies, no 5xx other than 503, a full drain, and work done. */
  static void assertNothingLostDuplicatedOrChanged(Outcome outcome) {
    Accounting.Result a = outcome.accounting();
    assertThat(a.anomalies()).isEmpty();
    assertThat(a.lost()).isZero();
    assertThat(a.duplicated()).isZero();
    assertThat(a.unexpected()).isZero();
    assertThat(a.changedAnswers()).isZero();
    assertThat(outcome.serverErrors()).as("answers 5xx other than 503").isEmpty();
    assertThat(outcome.undrained()).isEmpty();
    assertThat(a.ok()).as("work got done").isGreaterThan(20);
  }
}
