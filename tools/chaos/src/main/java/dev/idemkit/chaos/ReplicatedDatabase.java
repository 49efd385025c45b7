package dev.idemkit.chaos;

/**
 * The payments database on a PostgreSQL primary with one streaming standby, which the nemesis fails
 * over ({@link Nemesis}'s {@code failover}): what the chaos run needs of such a pair, and no more.
 * {@link LocalReplicatedPostgres} runs it on this machine.
 */
interface ReplicatedDatabase extends AutoCloseable {

  /** How the standby follows the primary. */
  enum Replication {
    /** Named in the primary's {@code synchronous_standby_names}: a commit waits for it. */
    SYNCHRONOUS,
    /** Streams behind the primary: a commit does not wait for it. */
    ASYNCHRONOUS
  }

  /**
   * A JDBC URL to {@code database} over both servers, on which the driver connects to the one that
   * takes writes ({@code targetServerType=primary}), before and after a failover.
   */
  String jdbcUrl(String database);

  /** How the standby follows the primary, for the report. */
  Replication replication();

  /** Whether a standby streams from the primary now, so that a failover can promote it. */
  boolean standbyReady();

  /**
   * Kills the primary ({@code kill -9} of its postmaster and every server process, as a crash of
   * its machine would) and promotes the standby ({@code pg_ctl promote}); returns once the new
   * primary takes writes. The pair then has no standby until {@link #rebuildStandby}.
   *
   * @throws IllegalStateException when no standby is ready
   */
  void failOver();

  /**
   * Makes the server killed by the last {@link #failOver} the new primary's standby again: a fresh
   * base backup of the new primary on the old one's port, started, and streaming as {@link
   * #replication}; returns once it streams.
   */
  void rebuildStandby();

  /** Stops both servers at once and deletes their directories. */
  @Override
  void close();
}
