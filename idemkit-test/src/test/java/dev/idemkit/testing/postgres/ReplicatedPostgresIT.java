package dev.idemkit.testing.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.idemkit.testing.postgres.ReplicatedPostgres.Node;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real primary and standby from the machine's PostgreSQL binaries: a row written on the primary
 * reaches the standby, a promoted standby takes writes and keeps what it had, and a killed primary
 * comes back as a standby of the new one. Nothing is left running or on disk afterwards.
 */
class ReplicatedPostgresIT {

  @BeforeAll
  static void binaries() {
    assumeThat(ReplicatedPostgres.available(ReplicatedPostgres.MACHINE_BINARIES))
        .as(
            "PostgreSQL binaries (initdb, pg_ctl, pg_basebackup, postgres, psql) in "
                + ReplicatedPostgres.MACHINE_BINARIES)
        .isTrue();
  }

  @Test
  void aStandbyFollowsIsPromotedAndTheOldPrimaryComesBackAsItsStandby() {
    Path dataDir;
    try (ReplicatedPostgres pair = ReplicatedPostgres.startPrimary()) {
      Node first = pair.primary();
      dataDir = first.dataDir();
      Node standby = pair.addStandby("standby_a", Replication.ASYNCHRONOUS);
      assertThat(pair.psql(first, "select sync_state from pg_stat_replication")).isEqualTo("async");

      pair.replicate(standby, Replication.SYNCHRONOUS);
      assertThat(pair.psql(first, "show synchronous_standby_names"))
          .isEqualTo("FIRST 1 (\"standby_a\")");
      // A synchronous commit is on the standby when it returns: remote_apply makes it visible.
      pair.psql(
          first,
          "create table charges (id int primary key)",
          "set synchronous_commit = remote_apply; insert into charges values (1)");
      assertThat(pair.psql(standby, "select count(*) from charges")).isEqualTo("1");
      assertThat(pair.psql(standby, "select pg_is_in_recovery()")).isEqualTo("t");

      pair.killPrimary();
      pair.promote(standby);
      assertThat(pair.primary()).isEqualTo(standby);
      assertThat(pair.psql(standby, "select pg_is_in_recovery()")).isEqualTo("f");
      pair.psql(standby, "insert into charges values (2)");

      pair.rebuildAsStandby(first, Replication.SYNCHRONOUS);
      assertThat(pair.standbys()).containsExactly(first);
      assertThat(pair.psql(first, "select pg_is_in_recovery()")).isEqualTo("t");
      awaitRows(pair, first, "2");
      assertThat(pair.jdbcUrl())
          .isEqualTo(
              "jdbc:postgresql://127.0.0.1:"
                  + first.port()
                  + ",127.0.0.1:"
                  + standby.port()
                  + "/postgres?user=postgres&targetServerType=primary"
                  + "&hostRecheckSeconds=1&connectTimeout=2");
    }
    assertThat(Files.exists(dataDir.getParent())).isFalse();
  }

  /**
   * What asynchronous replication risks, made to happen: commits acknowledged by the primary while
   * its standby received nothing are gone from the standby promoted after the primary dies.
   */
  @Test
  void aLaggingAsynchronousStandbyPromotedLosesWhatItHadNotReceived() {
    try (ReplicatedPostgres pair = ReplicatedPostgres.startPrimary()) {
      Node first = pair.primary();
      Node standby = pair.addStandby("standby_a", Replication.ASYNCHRONOUS);
      pair.psql(
          first, "create table charges (id int primary key)", "insert into charges values (1)");
      awaitRows(pair, standby, "1");

      pair.stopReceiving(standby);
      pair.psql(first, "insert into charges select g from generate_series(2, 101) g");
      assertThat(pair.psql(first, "select count(*) from charges")).isEqualTo("101");
      pair.killPrimary();
      pair.discardUnreceived(standby);
      pair.promote(standby);

      assertThat(pair.psql(standby, "select pg_is_in_recovery()")).isEqualTo("f");
      assertThat(pair.psql(standby, "select count(*) from charges"))
          .as("the 100 acknowledged rows the standby never received")
          .isEqualTo("1");
    }
  }

  /** A frozen primary's processes are all stopped (or ended), and answer again once thawed. */
  @Test
  void aFrozenPrimaryIsStoppedUntilThawed() throws Exception {
    try (ReplicatedPostgres pair = ReplicatedPostgres.startPrimary()) {
      Node primary = pair.primary();
      long postmaster =
          Long.parseLong(Files.readAllLines(primary.dataDir().resolve("postmaster.pid")).get(0));

      pair.freezePrimary();
      assertThat(state(postmaster)).as("postmaster state").isEqualTo("T");
      // Each child is stopped, or had already ended (a zombie the stopped postmaster cannot reap).
      assertThat(ProcessHandle.of(postmaster).orElseThrow().descendants())
          .isNotEmpty()
          .allSatisfy(p -> assertThat(state(p.pid())).isIn("T", "Z"));
      pair.thawPrimary();

      assertThat(state(postmaster)).isNotEqualTo("T");
      assertThat(pair.psql(primary, "select 1")).isEqualTo("1");
    }
  }

  /** A process's state letter from {@code /proc} ({@code T}: stopped by a signal). */
  private static String state(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      return stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void awaitRows(ReplicatedPostgres pair, Node node, String count) {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    while (!pair.psql(node, "select count(*) from charges").equals(count)
        && Instant.now().isBefore(deadline)) {
      Thread.onSpinWait();
    }
    assertThat(pair.psql(node, "select count(*) from charges")).isEqualTo(count);
  }
}
