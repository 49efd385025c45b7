package dev.idemkit.spring.boot;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * What the database shows about the durability of a commit Idemkit acknowledges: its {@code
 * synchronous_commit}, its {@code synchronous_standby_names}, the standbys streaming from it
 * ({@code pg_stat_replication}) and whether it is itself in recovery. Read with one statement, on
 * one connection, once at start-up (docs/failover.md).
 *
 * <p>Any role may read the two settings and see that standbys are connected; only superusers and
 * members of {@code pg_monitor} (or {@code pg_read_all_stats}) see a standby's {@code sync_state}.
 * The settings alone already decide the common unsafe cases (asynchronous replication, {@code
 * synchronous_commit=off}); the check says {@link Verdict#UNKNOWN} only when the answer hangs on a
 * state it may not see, or when the read fails.
 */
final class ReplicationSafety {

  /** What the check concludes. */
  enum Verdict {
    /** At least one synchronous standby, and commits wait for it. */
    SAFE,
    /** No standby: nothing to fail over to, nothing asynchronous to lose. */
    SINGLE_SERVER,
    /** The database can lose commits it acknowledged. */
    UNSAFE,
    /** The check could not read what decides it. */
    UNKNOWN
  }

  /** The conclusion and the one line that says why. */
  record Finding(Verdict verdict, String message) {}

  /** One row per standby (none when there is none); the settings on every row. */
  private static final String READ =
      """
      select current_setting('synchronous_commit') as synchronous_commit,
             current_setting('synchronous_standby_names') as synchronous_standby_names,
             pg_is_in_recovery() as in_recovery,
             r.pid as standby_pid,
             r.application_name,
             r.sync_state
        from (select 1) as server
        left join pg_stat_replication r on true
       order by r.application_name
      """;

  private static final List<String> SYNCHRONOUS_STATES = List.of("sync", "quorum");

  private ReplicationSafety() {}

  /** A standby as the primary shows it; {@code syncState} is null when the role may not see it. */
  record Standby(String name, String syncState) {
    @Override
    public String toString() {
      return (name == null || name.isEmpty() ? "(unnamed)" : name)
          + " ("
          + (syncState == null ? "state hidden" : syncState)
          + ")";
    }
  }

  /** Reads the database behind {@code dataSource} and judges it; a read error is UNKNOWN. */
  static Finding check(DataSource dataSource) {
    String synchronousCommit = null;
    String standbyNames = null;
    boolean inRecovery = false;
    List<Standby> standbys = new ArrayList<>();
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery(READ)) {
      while (rows.next()) {
        synchronousCommit = rows.getString("synchronous_commit");
        standbyNames = rows.getString("synchronous_standby_names");
        inRecovery = rows.getBoolean("in_recovery");
        if (rows.getObject("standby_pid") != null) {
          standbys.add(
              new Standby(rows.getString("application_name"), rows.getString("sync_state")));
        }
      }
    } catch (SQLException e) {
      return new Finding(
          Verdict.UNKNOWN, "could not read the database's replication settings: " + e.getMessage());
    }
    return judge(synchronousCommit, standbyNames, inRecovery, standbys);
  }

  /** The verdict on what was read; the message names every problem found. */
  static Finding judge(
      String synchronousCommit, String standbyNames, boolean inRecovery, List<Standby> standbys) {
    List<String> unsafe = new ArrayList<>();
    if (inRecovery) {
      unsafe.add(
          "the database is a standby in recovery, not the primary (a multi-host URL needs"
              + " targetServerType=primary)");
    }
    if ("off".equals(synchronousCommit)) {
      unsafe.add(
          "synchronous_commit=off: a crash of the server loses its last acknowledged commits,"
              + " failover or not");
    } else if ("local".equals(synchronousCommit)) {
      unsafe.add(
          "synchronous_commit=local: commits do not wait for any standby, so a failover can lose"
              + " acknowledged ones");
    }
    List<Standby> synchronous =
        standbys.stream()
            .filter(s -> s.syncState() != null && SYNCHRONOUS_STATES.contains(s.syncState()))
            .toList();
    // Visibility is the role's: either every standby's sync_state shows, or none does.
    boolean hidden = standbys.stream().anyMatch(s -> s.syncState() == null);
    if (!standbys.isEmpty() && standbyNames.isBlank()) {
      unsafe.add(
          "no synchronous standby: "
              + list(standbys)
              + " replicate asynchronously (synchronous_standby_names is empty), and a failover"
              + " to any of them can lose acknowledged commits");
    } else if (!standbys.isEmpty() && !hidden && synchronous.isEmpty()) {
      unsafe.add(
          "no synchronous standby: none of "
              + list(standbys)
              + " is synchronous under synchronous_standby_names '"
              + standbyNames
              + "', and a failover to any of them can lose acknowledged commits");
    }
    if (!unsafe.isEmpty()) {
      return new Finding(Verdict.UNSAFE, String.join("; ", unsafe));
    }
    if (standbys.isEmpty()) {
      return new Finding(
          Verdict.SINGLE_SERVER,
          standbyNames.isBlank()
              ? "one server, no standby: failover safety needs a synchronous standby"
                  + " (docs/failover.md)"
              : "no standby is connected, and synchronous_standby_names '"
                  + standbyNames
                  + "' makes every commit wait until one is");
    }
    if (hidden) {
      return new Finding(
          Verdict.UNKNOWN,
          "cannot see whether "
              + list(standbys)
              + " is synchronous: pg_stat_replication shows sync_state only to superusers and"
              + " members of pg_monitor");
    }
    String safe =
        "synchronous standby "
            + list(synchronous)
            + " with synchronous_commit="
            + synchronousCommit
            + ": a failover to it loses no acknowledged commit";
    return new Finding(
        Verdict.SAFE,
        synchronous.size() == standbys.size()
            ? safe
            : safe
                + "; promote only a synchronous standby: a failover to another of "
                + list(standbys)
                + " can lose acknowledged commits");
  }

  private static String list(List<Standby> standbys) {
    return standbys.stream().map(Standby::toString).collect(Collectors.joining(", "));
  }
}
