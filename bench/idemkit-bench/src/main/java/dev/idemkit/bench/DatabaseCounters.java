package dev.idemkit.bench;

import dev.idemkit.jdbc.EmbeddedLogin;
import dev.idemkit.jdbc.IdemkitDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What PostgreSQL itself counted while a phase of {@code bench/http} ran: commits from {@code
 * pg_stat_database} ({@code xact_commit}) and, when the server loads {@code pg_stat_statements},
 * the statements it executed. Nothing here runs inside the measured service: the counters are read
 * from a connection of the benchmark's own, to a database of its own ({@value #OWN_DATABASE}), so
 * neither its connection nor its queries are counted, and the service runs exactly as it would
 * without them (apart from the small cost of {@code pg_stat_statements} itself, which both sides of
 * the comparison pay; {@code --pg-stat-statements false} turns it off).
 *
 * <p>Two databases are counted apart: the service's ({@value #SERVICE_DATABASE}) and the provider
 * simulator's ({@value #PROVIDER_DATABASE}, on the same server), which raw and layer requests alike
 * pay for.
 *
 * <p>How exact: {@code pg_stat_statements} counts each statement when it ends. {@code
 * pg_stat_database} (PostgreSQL 14) learns of a backend's commits when the backend reports them, at
 * most every 500 ms, so a phase's count can miss up to that much of each connection's last activity
 * (counted in the next phase instead); {@link #settle()} waits before each reading to let the
 * reports arrive. Background work of the service (outbox relay, inboxes, cleanup and recovery
 * workers) is counted with the phase it runs in; {@code bench/http} measures its idle rate apart.
 */
final class DatabaseCounters implements AutoCloseable {

  static final String SERVICE_DATABASE = "postgres";
  static final String PROVIDER_DATABASE = "postgres_provider";
  static final String OWN_DATABASE = "bench_counters";

  /**
   * The embedded server as Idemkit runs it, in {@code dataDir}, with {@code pg_stat_statements}
   * loaded: what {@code bench/store --profile} and {@code bench/events --profile} read.
   */
  static EmbeddedPostgres embeddedWithStatements(Path dataDir) throws IOException {
    return IdemkitDatabase.embeddedServer(dataDir, 100)
        .setServerConfig("shared_preload_libraries", "pg_stat_statements")
        .setServerConfig("pg_stat_statements.track_planning", "on")
        .start();
  }

  /**
   * Counts of one database at one moment, or the difference of two such moments: commits and
   * statements of the service's and the provider's databases, the service's writes of record rows
   * ({@code idemkit_record} and its history: inserted, updated and deleted rows from {@code
   * pg_stat_user_tables}), its statements that touch the quota tables, and its round trips to the
   * server ({@link #roundTrips}).
   */
  record Counts(
      long serviceCommits,
      long serviceStatements,
      long serviceTransactionControl,
      long providerCommits,
      long providerStatements,
      long recordWrites,
      long quotaStatements,
      long roundTrips) {

    static final Counts ZERO = new Counts(0, 0, 0, 0, 0, 0, 0, 0);

    Counts minus(Counts o) {
      return new Counts(
          serviceCommits - o.serviceCommits,
          serviceStatements - o.serviceStatements,
          serviceTransactionControl - o.serviceTransactionControl,
          providerCommits - o.providerCommits,
          providerStatements - o.providerStatements,
          recordWrites - o.recordWrites,
          quotaStatements - o.quotaStatements,
          roundTrips - o.roundTrips);
    }

    Counts plus(Counts o) {
      return new Counts(
          serviceCommits + o.serviceCommits,
          serviceStatements + o.serviceStatements,
          serviceTransactionControl + o.serviceTransactionControl,
          providerCommits + o.providerCommits,
          providerStatements + o.providerStatements,
          recordWrites + o.recordWrites,
          quotaStatements + o.quotaStatements,
          roundTrips + o.roundTrips);
    }
  }

  /**
   * Commits per database; with {@code pg_stat_statements}, every statement executed at top level
   * per database, and of them the transaction control ({@code BEGIN}, {@code COMMIT}, {@code
   * ROLLBACK}, {@code SET}, {@code SHOW}).
   */
  private static final String READ_WITH_STATEMENTS =
      """
      select d.datname, d.xact_commit,
          (select coalesce(sum(s.calls), 0) from pg_stat_statements s where s.dbid = d.datid)
              as statements,
          (select coalesce(sum(s.calls), 0) from pg_stat_statements s
           where s.dbid = d.datid and s.query ~* '^\\s*(begin|commit|rollback|set|show)\\M')
              as transaction_control,
          (select coalesce(sum(s.calls), 0) from pg_stat_statements s
           where s.dbid = d.datid and s.query ~* 'idemkit_(quota|admit)')
              as quota_statements
      from pg_stat_database d
      where d.datname in ('postgres', 'postgres_provider')
      """;

  private static final String READ_COMMITS_ONLY =
      """
      select d.datname, d.xact_commit, 0 as statements, 0 as transaction_control,
          0 as quota_statements
      from pg_stat_database d
      where d.datname in ('postgres', 'postgres_provider')
      """;

  private final Connection connection;
  private final boolean statements;

  /** A connection to the service's own database, opened when first needed. */
  private Connection serviceDatabase;

  private final int port;

  private final String password;

  /** The service's process id, whose sockets {@link #roundTrips} counts; 0 until it is given. */
  private long servicePid;

  private DatabaseCounters(Connection connection, boolean statements, int port, String password) {
    this.password = password;
    this.connection = connection;
    this.port = port;
    this.statements = statements;
  }

  /**
   * Prepares a fresh data directory before the service starts on it: initializes it, has the server
   * load {@code pg_stat_statements} from its next start on ({@code ALTER SYSTEM}, kept in the
   * directory's {@code postgresql.auto.conf}), and creates the benchmark's own database.
   */
  static void prepare(Path dataDir, boolean withStatements) throws Exception {
    try (EmbeddedPostgres pg = IdemkitDatabase.embeddedServer(dataDir, 200).start();
        Connection c = pg.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      if (withStatements) {
        s.execute("alter system set shared_preload_libraries = 'pg_stat_statements'");
      }
      s.execute("create database " + OWN_DATABASE);
    }
  }

  /** Connects to the server the service started on {@code dataDir}, once it is up. */
  static DatabaseCounters connect(Path dataDir, boolean withStatements) throws SQLException {
    int port = port(dataDir);
    // The service set a superuser password at its start (EmbeddedLogin), kept in the directory.
    String password;
    try {
      password = Files.readString(dataDir.resolve(EmbeddedLogin.SUPERUSER_PASSWORD_FILE)).trim();
    } catch (IOException e) {
      throw new SQLException("No superuser password in " + dataDir, e);
    }
    Connection c =
        DriverManager.getConnection(
            "jdbc:postgresql://127.0.0.1:" + port + "/" + OWN_DATABASE, "postgres", password);
    boolean loaded = false;
    if (withStatements) {
      try (Statement s = c.createStatement()) {
        s.execute("create extension if not exists pg_stat_statements");
        s.executeQuery("select 1 from pg_stat_statements limit 1").close();
        loaded = true;
      } catch (SQLException notLoaded) {
        System.out.println(
            "bench/http: pg_stat_statements is not available ("
                + notLoaded.getMessage()
                + "); counting commits only");
      }
    }
    return new DatabaseCounters(c, loaded, port, password);
  }

  boolean countsStatements() {
    return statements;
  }

  /** Gives backends time to report their last commits (at most every 500 ms in PostgreSQL 14). */
  static void settle() throws InterruptedException {
    Thread.sleep(1_200);
  }

  /**
   * Calls and execution milliseconds of each statement (its text, whitespace folded) in the
   * service's database; empty without {@code pg_stat_statements}.
   */
  java.util.Map<String, double[]> callsByStatement() throws SQLException {
    java.util.Map<String, double[]> calls = new java.util.HashMap<>();
    if (!statements) {
      return calls;
    }
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                """
                select regexp_replace(s.query, '\\s+', ' ', 'g') as query, sum(s.calls) as calls,
                    sum(s.total_exec_time) as millis
                from pg_stat_statements s join pg_database d on d.oid = s.dbid
                where d.datname = '%s'
                group by 1
                """
                    .formatted(SERVICE_DATABASE))) {
      while (rs.next()) {
        calls.put(
            rs.getString("query"), new double[] {rs.getLong("calls"), rs.getDouble("millis")});
      }
    }
    return calls;
  }

  /** Rows of the record tables inserted, updated and deleted, as the service's database counts. */
  private static final String RECORD_WRITES =
      """
      select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) from pg_stat_user_tables
      where relname in ('idemkit_record', 'idemkit_record_history')
      """;

  Counts read() throws SQLException {
    long serviceCommits = 0;
    long serviceStatements = 0;
    long serviceControl = 0;
    long providerCommits = 0;
    long providerStatements = 0;
    long quotaStatements = 0;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(statements ? READ_WITH_STATEMENTS : READ_COMMITS_ONLY)) {
      while (rs.next()) {
        if (SERVICE_DATABASE.equals(rs.getString("datname"))) {
          serviceCommits = rs.getLong("xact_commit");
          serviceStatements = rs.getLong("statements");
          serviceControl = rs.getLong("transaction_control");
          quotaStatements = rs.getLong("quota_statements");
        } else {
          providerCommits = rs.getLong("xact_commit");
          providerStatements = rs.getLong("statements");
        }
      }
    }
    long recordWrites;
    try (Statement s = serviceDatabase().createStatement();
        ResultSet rs = s.executeQuery(RECORD_WRITES)) {
      rs.next();
      recordWrites = rs.getLong(1);
    }
    return new Counts(
        serviceCommits,
        serviceStatements,
        serviceControl,
        providerCommits,
        providerStatements,
        recordWrites,
        quotaStatements,
        roundTrips());
  }

  /**
   * Round trips the service made to the server so far, on the connections it holds open now: the
   * TCP data segments its sockets to the server's port sent ({@code data_segs_out} of {@code ss
   * -ti}, the kernel's count; the service's own pid picks its sockets). A round trip is one send of
   * the client followed by the server's answer, and on loopback one send is one segment unless it
   * is larger than the segment size (32 KiB here; the payment's messages are far smaller), so
   * statements sent together with their {@code COMMIT} count once, as they travel. A connection
   * closed between two readings takes its count with it (the pool keeps its connections for thirty
   * minutes). -1 when {@code ss} is not there, or no service pid was given.
   */
  long roundTrips() {
    if (servicePid <= 0) {
      return -1;
    }
    try {
      Process ss =
          new ProcessBuilder("ss", "-tinpH", "state", "established", "( dport = :" + port + " )")
              .redirectErrorStream(true)
              .start();
      String out = new String(ss.getInputStream().readAllBytes());
      if (ss.waitFor() != 0) {
        return -1;
      }
      long segments = 0;
      boolean serviceSocket = false;
      for (String line : out.split("\n")) {
        if (!line.startsWith("\t") && !line.startsWith(" ")) {
          serviceSocket = line.contains("pid=" + servicePid + ",");
        } else if (serviceSocket) {
          Matcher m = DATA_SEGMENTS_OUT.matcher(line);
          if (m.find()) {
            segments += Long.parseLong(m.group(1));
          }
        }
      }
      return segments;
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static final Pattern DATA_SEGMENTS_OUT = Pattern.compile("\\bdata_segs_out:(\\d+)");

  /** Whose round trips {@link #roundTrips} counts: the service's process id. */
  void countRoundTripsOf(long pid) {
    this.servicePid = pid;
  }

  /** A connection to the service's own database, opened once. */
  Connection serviceDatabase() throws SQLException {
    if (serviceDatabase == null) {
      serviceDatabase =
          DriverManager.getConnection(
              "jdbc:postgresql://127.0.0.1:" + port + "/" + SERVICE_DATABASE, "postgres", password);
    }
    return serviceDatabase;
  }

  /**
   * The service's background work still to do: events not yet sent (the embedded transport sends an
   * event by applying it in the consumers' inboxes) and deliveries not yet made (the receipts'
   * mails).
   */
  private static final String BACKLOG =
      """
      select (select count(*) from idemkit_outbox where sent_at is null and parked_at is null)
           + (select count(*) from idemkit_delivery where status = 'PENDING')
      """;

  /**
   * Waits, at most {@code max}, until the service has caught up with its background work (the
   * events and deliveries the last phase left), so that it is not billed to the next phase; answers
   * how long that took, or -1 when the service has no outbox or did not catch up in time.
   */
  long drainBacklog(java.time.Duration max) throws SQLException, InterruptedException {
    long start = System.nanoTime();
    long deadline = start + max.toNanos();
    try (Statement s = serviceDatabase().createStatement()) {
      while (true) {
        try (ResultSet rs = s.executeQuery(BACKLOG)) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return (System.nanoTime() - start) / 1_000_000;
          }
        } catch (SQLException noOutbox) {
          return -1;
        }
        if (System.nanoTime() > deadline) {
          return -1;
        }
        Thread.sleep(50);
      }
    }
  }

  /** The server's port, from line 4 of its {@code postmaster.pid}. */
  private static int port(Path dataDir) {
    try {
      List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
      return Integer.parseInt(lines.get(3).trim());
    } catch (Exception e) {
      throw new IllegalStateException("no running PostgreSQL in " + dataDir, e);
    }
  }

  @Override
  public void close() throws SQLException {
    if (serviceDatabase != null) {
      serviceDatabase.close();
    }
    connection.close();
  }
}
