package dev.idemkit.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A primary and one streaming standby on this machine, from the PostgreSQL 15 binaries in {@link
 * #BINARIES} ({@code initdb}, {@code pg_ctl}, {@code pg_basebackup}), in a temporary directory, on
 * free loopback ports, with trust authentication. PostgreSQL refuses to run as root, so as root
 * every program runs as the {@code postgres} user ({@code runuser}) and the directory is theirs.
 *
 * <p>The servers are {@code a} and {@code b}; they swap roles at each failover. Synchronous
 * replication names the standby in the primary's {@code synchronous_standby_names}, with {@code
 * synchronous_commit = on}: a commit is acknowledged once the standby has flushed it, so the
 * promoted standby has every acknowledged commit. Between a failover and the rebuild the new
 * primary has no standby and waits for none ({@code synchronous_standby_names} empty), as an
 * operator leaves a lone primary serving; the nemesis fails over again only once the rebuilt
 * standby streams, so no acknowledged commit lives on one server alone when it is killed.
 */
final class LocalReplicatedPostgres implements ReplicatedDatabase {

  /** Where Debian and Ubuntu install PostgreSQL 15. */
  static final Path BINARIES = Path.of("/usr/lib/postgresql/15/bin");

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** One server: its name (the standby's {@code application_name}), port and data directory. */
  private record Node(String name, int port, Path dataDir) {}

  private final Replication replication;
  private final Path base;
  private final boolean root = "root".equals(System.getProperty("user.name"));
  private final Node a;
  private final Node b;
  private volatile Node primary;
  private volatile Node standby;

  /** Whether this machine has the binaries this class runs. */
  static boolean available() {
    return Stream.of("initdb", "pg_ctl", "pg_basebackup")
        .allMatch(tool -> Files.isExecutable(BINARIES.resolve(tool)));
  }

  /** Starts a primary and its standby, streaming as {@code replication}. */
  LocalReplicatedPostgres(Replication replication) throws IOException {
    this.replication = replication;
    this.base = Files.createTempDirectory("idemkit-chaos-replicated-");
    this.a = new Node("pg_a", freePort(), base.resolve("a"));
    this.b = new Node("pg_b", freePort(), base.resolve("b"));
    try {
      if (root) {
        run("chown", "postgres", base.toString());
      }
      pg("initdb", "-D", a.dataDir().toString(), "-U", "postgres", "--auth=trust", "--no-sync");
      configure(a);
      start(a);
      primary = a;
      sql(a, "create role replicator with replication login");
      follow(b);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  @Override
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:"
        + a.port()
        + ",127.0.0.1:"
        + b.port()
        + "/"
        + database
        + "?targetServerType=primary&hostRecheckSeconds=1&connectTimeout=2";
  }

  @Override
  public Replication replication() {
    return replication;
  }

  @Override
  public boolean standbyReady() {
    return standby != null;
  }

  @Override
  public synchronized void failOver() {
    Node next = standby;
    if (next == null) {
      throw new IllegalStateException("no standby to promote");
    }
    Node old = primary;
    kill9(old);
    pg("pg_ctl", "-D", next.dataDir().toString(), "-w", "-t", seconds(), "promote");
    standby = null;
    primary = next;
    // The new primary's settings came from the old one's base backup: it would wait for a
    // standby that is not there.
    sql(next, "alter system set synchronous_standby_names = ''", "select pg_reload_conf()");
  }

  @Override
  public synchronized void rebuildStandby() {
    Node old = primary == a ? b : a;
    if (old.equals(standby)) {
      return;
    }
    stopQuietly(old);
    deleteRecursively(old.dataDir());
    follow(old);
  }

  /** A base backup of the primary into {@code node}, started as its standby, streaming. */
  private void follow(Node node) {
    pg(
        "pg_basebackup",
        "-h",
        "127.0.0.1",
        "-p",
        String.valueOf(primary.port()),
        "-U",
        "replicator",
        "-D",
        node.dataDir().toString(),
        "-X",
        "stream",
        "-R",
        // At once: a spread checkpoint on a primary under load takes minutes.
        "--checkpoint=fast",
        "--no-sync");
    configure(node);
    // -R wrote a primary_conninfo without a name; this later line wins and names the standby.
    append(
        node.dataDir().resolve("postgresql.auto.conf"),
        "primary_conninfo = 'host=127.0.0.1 port="
            + primary.port()
            + " user=replicator application_name="
            + node.name()
            + "'",
        "synchronous_standby_names = ''");
    start(node);
    String names = replication == Replication.SYNCHRONOUS ? node.name() : "";
    sql(
        primary,
        "alter system set synchronous_standby_names = '" + names + "'",
        "alter system set synchronous_commit = 'on'",
        "select pg_reload_conf()");
    String state = replication == Replication.SYNCHRONOUS ? "sync" : "async";
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!streams(node, state)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            node.name() + " does not stream " + state + " after " + WAIT);
      }
      sleep(100);
    }
    standby = node;
  }

  private boolean streams(Node node, String state) {
    try (Connection c = connect(primary);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select count(*) from pg_stat_replication where application_name = '"
                    + node.name()
                    + "' and state = 'streaming' and sync_state = '"
                    + state
                    + "'")) {
      return rs.next() && rs.getInt(1) == 1;
    } catch (SQLException e) {
      return false;
    }
  }

  private void configure(Node node) {
    append(
        node.dataDir().resolve("postgresql.conf"),
        "port = " + node.port(),
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        "wal_level = replica",
        "max_wal_senders = 10",
        "hot_standby = on",
        "fsync = off",
        "shared_buffers = 32MB",
        "max_connections = 100");
  }

  private void start(Node node) {
    pg(
        "pg_ctl",
        "-D",
        node.dataDir().toString(),
        "-l",
        base.resolve(node.name() + ".log").toString(),
        "-w",
        "-t",
        seconds(),
        "start");
  }

  /**
   * SIGKILL to the postmaster and every process it started, at once, as a crash of its machine ends
   * them: no backend finishes a commit and no WAL sender ships WAL after it; then waits until all
   * are gone.
   */
  private void kill9(Node node) {
    ProcessHandle.of(postmasterPid(node))
        .ifPresent(
            postmaster -> {
              List<ProcessHandle> all = new ArrayList<>(postmaster.descendants().toList());
              all.add(0, postmaster);
              all.forEach(ProcessHandle::destroyForcibly);
              all.forEach(p -> p.onExit().join());
            });
  }

  private void stopQuietly(Node node) {
    if (Files.exists(node.dataDir().resolve("postmaster.pid"))) {
      ProcessHandle.of(postmasterPid(node)).ifPresent(p -> kill9(node));
    }
  }

  private static long postmasterPid(Node node) {
    try {
      return Long.parseLong(
          Files.readAllLines(node.dataDir().resolve("postmaster.pid")).get(0).strip());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Connection connect(Node node) throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:" + node.port() + "/postgres", "postgres", "");
  }

  private static void sql(Node node, String... statements) {
    try (Connection c = connect(node);
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(node.name() + ": " + e.getMessage(), e);
    }
  }

  /** Runs one of the PostgreSQL binaries, as the {@code postgres} user when this JVM is root. */
  private void pg(String tool, String... args) {
    List<String> command = new ArrayList<>();
    if (root) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(BINARIES.resolve(tool).toString());
    command.addAll(List.of(args));
    run(command.toArray(String[]::new));
  }

  private void run(String... command) {
    try {
      Process p =
          new ProcessBuilder(command).redirectErrorStream(true).directory(base.toFile()).start();
      p.getOutputStream().close();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(command[0] + " did not end within " + WAIT);
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + output.strip());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    stopQuietly(a);
    stopQuietly(b);
    deleteRecursively(base);
  }

  private static void append(Path file, String... lines) {
    try {
      Files.writeString(
          file,
          "\n" + String.join("\n", lines) + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String seconds() {
    return String.valueOf(WAIT.toSeconds());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
