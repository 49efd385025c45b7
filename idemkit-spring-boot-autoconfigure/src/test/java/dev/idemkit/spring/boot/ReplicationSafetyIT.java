package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.idemkit.spring.boot.IdemkitProperties.ReplicationCheckMode;
import dev.idemkit.spring.boot.ReplicationSafety.Finding;
import dev.idemkit.spring.boot.ReplicationSafety.Verdict;
import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Node;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

/**
 * The start-up replication check against real servers from the machine's PostgreSQL binaries: a
 * primary with an asynchronous standby is reported (warn: one line and the start goes on; refuse:
 * the start stops with the failure analysis), the same standby made synchronous passes, and {@code
 * synchronous_commit=off} on a single server is reported. A role that may not see a standby's
 * {@code sync_state} gets "cannot see", which only refuse turns into a stopped start.
 */
@ExtendWith(OutputCaptureExtension.class)
class ReplicationSafetyIT {

  private static final String SECRET = "idemkit.issued-keys.secret=a-test-secret-of-enough-bytes";

  @BeforeAll
  static void binaries() {
    assumeThat(ReplicatedPostgres.available(ReplicatedPostgres.MACHINE_BINARIES))
        .as(
            "PostgreSQL binaries (initdb, pg_ctl, pg_basebackup, postgres, psql) in "
                + ReplicatedPostgres.MACHINE_BINARIES
                + " start the primary and its standby")
        .isTrue();
  }

  private static ApplicationContextRunner starter(Node primary, String mode) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceTransactionManagerAutoConfiguration.class,
                TransactionAutoConfiguration.class,
                IdemkitAutoConfiguration.class))
        .withPropertyValues(SECRET, "idemkit.database.replication-check=" + mode)
        .withBean(DataSource.class, () -> dataSource(primary, "postgres"));
  }

  private static DataSource dataSource(Node node, String user) {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setUrl(ReplicatedPostgres.jdbcUrl(node));
    dataSource.setUser(user);
    return dataSource;
  }

  @Test
  void anAsynchronousStandbyIsReportedAndASynchronousOnePasses(CapturedOutput output) {
    try (ReplicatedPostgres pair = ReplicatedPostgres.startPrimary()) {
      Node primary = pair.primary();
      Node standby = pair.addStandby("standby_a", Replication.ASYNCHRONOUS);

      Finding asynchronous = ReplicationSafety.check(dataSource(primary, "postgres"));
      assertThat(asynchronous.verdict()).isEqualTo(Verdict.UNSAFE);
      assertThat(asynchronous.message())
          .startsWith("no synchronous standby: standby_a (async) replicate asynchronously")
          .contains("a failover to any of them can lose acknowledged commits");

      starter(primary, "warn")
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                assertThat(output)
                    .contains(
                        "Idemkit replication check: no synchronous standby: standby_a (async)")
                    .contains("idemkit.database.replication-check=warn");
              });
      starter(primary, "refuse")
          .run(
              context -> {
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .isInstanceOf(ReplicationUnsafeException.class)
                    .hasMessage(asynchronous.message());
                var analysis =
                    new ReplicationUnsafeFailureAnalyzer().analyze(context.getStartupFailure());
                assertThat(analysis.getDescription())
                    .isEqualTo(
                        "Idemkit's replication check refused the start: " + asynchronous.message())
                    .doesNotContain("\n");
                assertThat(analysis.getAction())
                    .contains("idemkit.database.replication-check=warn")
                    .doesNotContain("\n");
              });

      pair.replicate(standby, Replication.SYNCHRONOUS);
      assertThat(ReplicationSafety.check(dataSource(primary, "postgres")))
          .isEqualTo(
              new Finding(
                  Verdict.SAFE,
                  "synchronous standby standby_a (sync) with synchronous_commit=on: a failover to it"
                      + " loses no acknowledged commit"));
      starter(primary, "refuse").run(context -> assertThat(context).hasNotFailed());

      // An application role without pg_monitor sees that a standby streams, not how.
      pair.psql(primary, "create role app login");
      assertThat(ReplicationSafety.check(dataSource(primary, "app")))
          .isEqualTo(
              new Finding(
                  Verdict.UNKNOWN,
                  "cannot see whether standby_a (state hidden) is synchronous: pg_stat_replication"
                      + " shows sync_state only to superusers and members of pg_monitor"));
      pair.psql(primary, "grant pg_monitor to app");
      assertThat(ReplicationSafety.check(dataSource(primary, "app")).verdict())
          .isEqualTo(Verdict.SAFE);
    }
  }

  @Test
  void aSingleServerIsFineUntilSynchronousCommitIsOff(CapturedOutput output) {
    try (ReplicatedPostgres single = ReplicatedPostgres.startPrimary()) {
      Node server = single.primary();
      starter(server, "refuse").run(context -> assertThat(context).hasNotFailed());
      assertThat(output)
          .contains(
              "Idemkit replication check: one server, no standby: failover safety needs a"
                  + " synchronous standby");

      single.psql(server, "alter system set synchronous_commit = off", "select pg_reload_conf()");
      assertThat(ReplicationSafety.check(dataSource(server, "postgres")))
          .isEqualTo(
              new Finding(
                  Verdict.UNSAFE,
                  "synchronous_commit=off: a crash of the server loses its last acknowledged commits,"
                      + " failover or not"));
      starter(server, "refuse")
          .run(
              context ->
                  assertThat(context)
                      .getFailure()
                      .rootCause()
                      .isInstanceOf(ReplicationUnsafeException.class));
    }
  }

  @Test
  void offReadsNothingAndAReadErrorIsUnknown() {
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:1/postgres?connectTimeout=2");
    Finding unreadable = ReplicationSafety.check(nowhere);
    assertThat(unreadable.verdict()).isEqualTo(Verdict.UNKNOWN);
    assertThat(unreadable.message())
        .startsWith("could not read the database's replication settings: ");
    // An unknown state stops only a refusing start; off does not even try to read.
    assertThatThrownBy(() -> check(nowhere, ReplicationCheckMode.REFUSE).afterPropertiesSet())
        .isInstanceOf(ReplicationUnsafeException.class)
        .hasMessage(unreadable.message());
    assertThatCode(() -> check(nowhere, ReplicationCheckMode.WARN).afterPropertiesSet())
        .doesNotThrowAnyException();
    assertThatCode(() -> check(nowhere, ReplicationCheckMode.OFF).afterPropertiesSet())
        .doesNotThrowAnyException();
  }

  private static IdemkitAutoConfiguration.IdemkitReplicationCheck check(
      DataSource dataSource, ReplicationCheckMode mode) {
    return new IdemkitAutoConfiguration.IdemkitReplicationCheck(dataSource, mode);
  }
}
