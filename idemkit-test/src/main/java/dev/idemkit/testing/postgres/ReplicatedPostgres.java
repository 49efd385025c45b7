package dev.idemkit.testing.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A PostgreSQL primary and its streaming-replication standbys on this machine, each in a temporary
 * directory on a free port of 127.0.0.1, run from the machine's PostgreSQL binaries: for tests and
 * the chaos run's failover nemesis. Every server trusts local connections (user {@code postgres},
 * database {@code postgres}); a role {@code replicator} streams to the standbys.
 *
 * <p>The binaries are run as they are ({@code initdb}, {@code pg_ctl}, {@code pg_basebackup},
 * {@code psql}): PostgreSQL refuses to run as root, so when this JVM is root every command runs as
 * the {@code postgres} user through {@code runuser}, and the directories belong to that user. SQL
 * goes through {@code psql}, so the test kit needs no JDBC driver.
 *
 * <p>{@code fsync} is off: a {@code kill -9} ends processes, not the machine, so what the operating
 * system holds survives it either way, and the servers start and commit faster on a shared machine.
 *
 * <p>Not thread-safe: one test or one nemesis drives it.
 */
public final class ReplicatedPostgres implements AutoCloseable {

  /** Where Debian and Ubuntu install PostgreSQL 15. */
  public static final Path MACHINE_BINARIES = Path.of("/usr/lib/postgresql/15/bin");

  private static final List<String> TOOLS =
      List.of("initdb", "pg_ctl", "pg_basebackup", "postgres", "psql");

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** How a standby follows the primary. */
  public enum Replication {
    /** Named in the primary's {@code synchronous_standby_names}: a commit waits for it. */
    SYNCHRONOUS,
    /** Streams behind the primary: a commit does not wait for it. */
    ASYNCHRONOUS
  }

  /** One server: its name (the {@code application_name} it streams under), port and directory. */
  public record Node(String name, int port, Path dataDir) {}

  private final Path binaries;
  private final Path base;
  private final boolean asPostgresUser;
  private final List<Node> nodes = new ArrayList<>();
  private final Map<Node, Replication> standbys = new LinkedHashMap<>();
  private final Map<Node, ProcessHandle> stoppedReceivers = new LinkedHashMap<>();
  private Node primary;

  private ReplicatedPostgres(Path binaries, Path base, boolean asPostgresUser) {
    this.binaries = binaries;
    this.base = base;
    this.asPostgresUser = asPostgresUser;
  }

  /** Whether {@code binaries} holds every program this class runs. */
  public static boolean available(Path binaries) {
    return TOOLS.stream().allMatch(tool -> Files.isExecutable(binaries.resolve(tool)));
  }

  /** Starts a primary named {@code primary} from the machine's PostgreSQL 15 binaries. */
  public static ReplicatedPostgres startPrimary() {
    return startPrimary(MACHINE_BINARIES);
  }

  /** Starts a primary named {@code primary} from the PostgreSQL binaries in {@code binaries}. */
  public static ReplicatedPostgres startPrimary(Path binaries) {
    if (!available(binaries)) {
      throw new IllegalStateException(binaries + " lacks one of " + TOOLS);
    }
    boolean root = "root".equals(System.getProperty("user.name"));
    Path base;
    try {
      base = Files.createTempDirectory("idemkit-replicated-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ReplicatedPostgres cluster = new ReplicatedPostgres(binaries, base, root);
    try {
      cluster.ownedByPostgres(base);
      Node node = cluster.newNode("primary");
      cluster.run(
          "initdb", "-D", node.dataDir().toString(), "-U", "postgres", "--auth=trust", "--no-sync");
      cluster.configure(node);
      cluster.start(node);
      cluster.primary = node;
      cluster.psql(node, "create role replicator with replication login");
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  /** The server that takes writes now. */
  public Node primary() {
    return primary;
  }

  /** Every server, primary and standbys (also one being rebuilt), in the order they were made. */
  public List<Node> nodes() {
    return List.copyOf(nodes);
  }

  /** The standbys following the primary now, in the order they were added. */
  public List<Node> standbys() {
    return List.copyOf(standbys.keySet());
  }

  /**
   * Adds a standby named {@code name} from a base backup of the primary and waits until it streams;
   * a {@link Replication#SYNCHRONOUS} one is then named in the primary's {@code
   * synchronous_standby_names} and waited for until the primary reports it synchronous.
   */
  public Node addStandby(String name, Replication replication) {
    Node node = newNode(name);
    follow(node, replication);
    return node;
  }

  /**
   * Makes {@code standby} replicate as {@code replication} from now on: sets the primary's {@code
   * synchronous_standby_names} and reloads it.
   */
  public void replicate(Node standby, Replication replication) {
    requireStandby(standby);
    standbys.put(standby, replication);
    applySynchronousStandbyNames();
    awaitStreaming(standby, replication);
  }

  /**
   * Promotes {@code standby} to primary ({@code pg_ctl promote}, waiting until it takes writes).
   * The old primary, if still running, is stopped at once: two primaries would both take writes.
   * The new primary has no synchronous standby until one is added or rebuilt.
   */
  public void promote(Node standby) {
    requireStandby(standby);
    Node old = primary;
    if (running(old)) {
      stop(old);
    }
    run("pg_ctl", "-D", standby.dataDir().toString(), "-w", "-t", seconds(), "promote");
    standbys.remove(standby);
    primary = standby;
    // Other standbys still follow the old primary: they are rebuilt, not re-pointed.
    standbys.keySet().forEach(this::stopQuietly);
    standbys.clear();
    applySynchronousStandbyNames();
  }

  /**
   * Kills the primary's postmaster and every server process it started with {@code SIGKILL}, all at
   * once, as a crash of its machine would end them: no backend finishes a commit and no WAL sender
   * ships WAL after it. Waits until all are gone and its port refuses connections.
   */
  public void killPrimary() {
    List<ProcessHandle> processes = serverProcesses(primary);
    processes.forEach(ProcessHandle::destroyForcibly);
    Instant deadline = Instant.now().plus(WAIT);
    while (processes.stream().anyMatch(ProcessHandle::isAlive) || accepts(primary)) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(primary.name() + " still runs after kill -9");
      }
      pause();
    }
  }

  /**
   * Freezes the primary: {@code SIGSTOP} to its postmaster and every server process it started, as
   * a hung machine or storage would: connections stay open, nothing answers and nothing fails,
   * until {@link #thawPrimary}.
   */
  public void freezePrimary() {
    ProcessHandle postmaster =
        ProcessHandle.of(postmasterPid(primary))
            .orElseThrow(() -> new IllegalStateException(primary.name() + " is not running"));
    // The postmaster first: stopped, it starts no process, so the list below is all there is.
    signal(List.of(postmaster), "STOP");
    signal(postmaster.descendants().toList(), "STOP");
  }

  /** Lets a frozen primary go on ({@code SIGCONT}): what it was doing carries on. */
  public void thawPrimary() {
    signal(serverProcesses(primary), "CONT");
  }

  /**
   * Stops {@code standby} receiving WAL ({@code SIGSTOP} to its WAL receiver) while the primary
   * goes on: an asynchronous standby falls behind by every commit from now on (a synchronous one
   * holds every commit). {@link #discardUnreceived} ends it.
   */
  public void stopReceiving(Node standby) {
    requireStandby(standby);
    String pid = psql(standby, "select pid from pg_stat_wal_receiver");
    if (pid.isEmpty()) {
      throw new IllegalStateException(standby.name() + " has no WAL receiver");
    }
    ProcessHandle receiver = ProcessHandle.of(Long.parseLong(pid)).orElseThrow();
    signal(List.of(receiver), "STOP");
    stoppedReceivers.put(standby, receiver);
  }

  /**
   * Throws away what {@code standby}, stopped by {@link #stopReceiving}, has not written yet: its
   * WAL receiver is killed with {@code kill -9} (the server restarts its recovery from the WAL it
   * has), as if the network had lost the bytes in flight when the primary died. Waits until the
   * standby accepts connections again. Call it once the primary is dead: a live one would stream
   * the rest to the restarted receiver.
   */
  public void discardUnreceived(Node standby) {
    requireStandby(standby);
    ProcessHandle receiver = stoppedReceivers.remove(standby);
    if (receiver == null) {
      throw new IllegalStateException(standby.name() + " was not stopped receiving");
    }
    receiver.destroyForcibly();
    Instant deadline = Instant.now().plus(WAIT);
    while (true) {
      try {
        psql(standby, "select 1");
        return;
      } catch (IllegalStateException restarting) {
        if (Instant.now().isAfter(deadline)) {
          throw restarting;
        }
        pause();
      }
    }
  }

  /** {@code node}'s postmaster and every server process it started. */
  private static List<ProcessHandle> serverProcesses(Node node) {
    List<ProcessHandle> processes = new ArrayList<>();
    ProcessHandle.of(postmasterPid(node))
        .ifPresent(
            postmaster -> {
              processes.add(postmaster);
              processes.addAll(postmaster.descendants().toList());
            });
    return processes;
  }

  /**
   * {@code kill -<signal>} to every one of {@code processes}, in one command. A process that ended
   * between its listing and the signal (a backend whose connection closed) fails the command for
   * its own pid only: the signal goes again to those still alive, and fails only if none ended.
   */
  private static void signal(List<ProcessHandle> processes, String signal) {
    if (processes.isEmpty()) {
      throw new IllegalStateException("no server process to " + signal);
    }
    List<ProcessHandle> left = processes;
    while (true) {
      List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
      left.forEach(p -> command.add(String.valueOf(p.pid())));
      try {
        execute(command, null);
        return;
      } catch (IllegalStateException failed) {
        List<ProcessHandle> alive = left.stream().filter(ProcessHandle::isAlive).toList();
        if (alive.size() == left.size()) {
          throw failed;
        }
        if (alive.isEmpty()) {
          return;
        }
        left = alive;
      }
    }
  }

  /**
   * Replaces a server that is no longer primary (killed, or stopped by {@link #promote}) with a
   * fresh base backup of the current primary on the same port, started as a standby: how an old
   * primary comes back after a failover.
   */
  public void rebuildAsStandby(Node old, Replication replication) {
    if (old.equals(primary)) {
      throw new IllegalArgumentException(old.name() + " is the primary");
    }
    stopQuietly(old);
    standbys.remove(old);
    deleteRecursively(old.dataDir());
    follow(old, replication);
  }

  /** {@link #jdbcUrl(String)} to the database {@code postgres}. */
  public String jdbcUrl() {
    return jdbcUrl("postgres");
  }

  /**
   * A multi-host JDBC URL to {@code database} over every server, on which the driver connects to
   * the one that takes writes: it follows the primary through failovers, checking again each second
   * and giving up on a dead server after two.
   */
  public String jdbcUrl(String database) {
    return jdbcUrl(database, port -> port);
  }

  /**
   * {@link #jdbcUrl(String)} with each server's port replaced by {@code via}'s for it: to reach the
   * servers through forwarders (a network that can be cut).
   */
  public String jdbcUrl(String database, IntUnaryOperator via) {
    return "jdbc:postgresql://"
        + nodes.stream()
            .map(node -> "127.0.0.1:" + via.applyAsInt(node.port()))
            .collect(Collectors.joining(","))
        + "/"
        + database
        + "?user=postgres&targetServerType=primary&hostRecheckSeconds=1&connectTimeout=2";
  }

  /** How {@code standby} follows the primary. */
  public Replication replication(Node standby) {
    requireStandby(standby);
    return standbys.get(standby);
  }

  /** A JDBC URL to {@code node} alone. */
  public static String jdbcUrl(Node node) {
    return "jdbc:postgresql://127.0.0.1:" + node.port() + "/postgres?user=postgres";
  }

  /**
   * Runs {@code statements} on {@code node}, each on its own (so {@code ALTER SYSTEM} works), and
   * returns what the last one printed, unaligned, without headers.
   */
  public String psql(Node node, String... statements) {
    List<String> command = new ArrayList<>(List.of("psql", "-X", "-q", "-A", "-t"));
    command.addAll(List.of("-h", "127.0.0.1", "-p", String.valueOf(node.port())));
    command.addAll(List.of("-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1"));
    for (String statement : statements) {
      command.add("-c");
      command.add(statement);
    }
    return run(command.toArray(String[]::new)).strip();
  }

  /** Stops every server at once ({@code pg_ctl stop -m immediate}) and deletes the directories. */
  @Override
  public void close() {
    nodes.forEach(this::stopQuietly);
    deleteRecursively(base);
  }

  private void follow(Node node, Replication replication) {
    run(
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
            + "'");
    start(node);
    standbys.put(node, replication);
    applySynchronousStandbyNames();
    awaitStreaming(node, replication);
  }

  private void applySynchronousStandbyNames() {
    String names =
        standbys.entrySet().stream()
            .filter(e -> e.getValue() == Replication.SYNCHRONOUS)
            .map(e -> "\"" + e.getKey().name() + "\"")
            .collect(Collectors.joining(", "));
    String value = names.isEmpty() ? "" : "FIRST 1 (" + names + ")";
    psql(
        primary,
        "alter system set synchronous_standby_names = '" + value + "'",
        "select pg_reload_conf()");
  }

  private void awaitStreaming(Node node, Replication replication) {
    String syncStates = replication == Replication.SYNCHRONOUS ? "'sync', 'quorum'" : "'async'";
    String sql =
        "select count(*) from pg_stat_replication where application_name = '"
            + node.name()
            + "' and state = 'streaming' and sync_state in ("
            + syncStates
            + ")";
    Instant deadline = Instant.now().plus(WAIT);
    while (!psql(primary, sql).equals("1")) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            node.name() + " does not stream " + replication + " after " + WAIT);
      }
      pause();
    }
  }

  private Node newNode(String name) {
    Node node = new Node(name, freePort(), base.resolve(name));
    nodes.add(node);
    return node;
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
    run(
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

  private void stop(Node node) {
    run("pg_ctl", "-D", node.dataDir().toString(), "-m", "immediate", "-w", "stop");
  }

  private void stopQuietly(Node node) {
    if (running(node)) {
      try {
        stop(node);
      } catch (RuntimeException e) {
        // Already gone, or a pid file left by kill -9: nothing to stop.
      }
    }
  }

  private boolean running(Node node) {
    Path pidFile = node.dataDir().resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return false;
    }
    return ProcessHandle.of(postmasterPid(node)).map(ProcessHandle::isAlive).orElse(false);
  }

  private static long postmasterPid(Node node) {
    try {
      List<String> lines = Files.readAllLines(node.dataDir().resolve("postmaster.pid"));
      return Long.parseLong(lines.get(0).strip());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean accepts(Node node) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), node.port()), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private void requireStandby(Node node) {
    if (!standbys.containsKey(node)) {
      throw new IllegalArgumentException(node.name() + " is not a standby of " + primary.name());
    }
  }

  /**
   * One of the server's programs ({@code initdb}, {@code pg_ctl}…), as its user when it has one.
   */
  private String run(String... command) {
    List<String> full = new ArrayList<>();
    if (asPostgresUser) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.add(binaries.resolve(command[0]).toString());
    full.addAll(List.of(command).subList(1, command.length));
    return execute(full, base);
  }

  /**
   * Runs {@code command} (in {@code directory}, if not null) to its end within {@link #WAIT}: its
   * output, or an exception naming it, its exit status and its output.
   */
  private static String execute(List<String> command, Path directory) {
    String name = String.join(" ", command);
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      if (directory != null) {
        builder.directory(directory.toFile());
      }
      Process process = builder.start();
      process.getOutputStream().close();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(name + " did not end within " + WAIT);
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            name + " failed (exit " + process.exitValue() + "): " + output.strip());
      }
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void ownedByPostgres(Path directory) {
    if (!asPostgresUser) {
      return;
    }
    try {
      UserPrincipal postgres =
          directory
              .getFileSystem()
              .getUserPrincipalLookupService()
              .lookupPrincipalByName("postgres");
      Files.setOwner(directory, postgres);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot give " + directory + " to user postgres", e);
    }
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

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String seconds() {
    return String.valueOf(WAIT.toSeconds());
  }

  private static void pause() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
