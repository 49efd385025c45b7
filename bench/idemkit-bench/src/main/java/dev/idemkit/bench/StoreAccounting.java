package dev.idemkit.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * {@link StoreBenchmark}'s accounting: each variant alone on one connection, its round trips,
 * record rows and WAL per request.
 */
final class StoreAccounting {

  private final DataSource dataSource;

  StoreAccounting(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Requests of each variant in the accounting. */
  static final int ACCOUNTED = 2_000;

  /** What one variant cost per request, from the counters. */
  record Accounts(double roundTrips, double recordRows, double walBytes) {}

  /**
   * Runs {@code request} {@value #ACCOUNTED} times on this thread (one connection at a time, so
   * nothing else runs on the pool) and reads the counters around it. The table counters reach the
   * readers only once a backend reports them ({@link #settle()}): each reading settles first.
   */
  Accounts account(String name, StoreRuns.Request request) throws Exception {
    request.run(); // a first request: the connection checked and warm
    settle();
    long[] before = databaseCounters();
    long trips = RoundTripCounter.count();
    for (int i = 0; i < ACCOUNTED; i++) {
      request.run();
    }
    trips = RoundTripCounter.count() - trips;
    long wal = walBytesSince(before[1]);
    settle();
    long[] after = databaseCounters();
    Accounts a =
        new Accounts(
            trips / (double) ACCOUNTED,
            (after[0] - before[0]) / (double) ACCOUNTED,
            wal / (double) ACCOUNTED);
    System.out.printf(
        "  %-12s %12.2f %12.2f %10.0f%n", name, a.roundTrips(), a.recordRows(), a.walBytes());
    return a;
  }

  /**
   * Lets the connection this thread uses report its table counters. A backend reports them at the
   * end of a transaction at most every 500 ms (PostgreSQL 14 sends them to the statistics
   * collector, which the readers see a moment later; 15 flushes an idle backend's within a second):
   * a transaction after the interval, then a pause, and the counters of everything before it are
   * there.
   */
  void settle() throws Exception {
    Thread.sleep(700);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("select 1");
    }
    Thread.sleep(1_200);
  }

  /** The record tables' rows written so far, and the WAL position (bytes since 0/0). */
  long[] databaseCounters() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select (select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)"
                    + " from pg_stat_user_tables"
                    + " where relname in ('idemkit_record', 'idemkit_record_history')),"
                    + " pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  long walBytesSince(long position) throws SQLException {
    return databaseCounters()[1] - position;
  }
}
