package dev.idemkit.chaos;

import dev.idemkit.StaticKeyProvider;
import dev.idemkit.examples.provider.Fault;
import dev.idemkit.examples.provider.ProviderSimulator;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the chaos run runs on, all on this machine's loopback: one PostgreSQL (the server {@code
 * IDEMKIT_TEST_JDBC_URL} names, in databases of this run's own, else an embedded one; the payments
 * database can be on a primary and standby of its own instead, {@link ReplicatedPostgres}, which
 * the instances reach over a multi-host URL), the provider simulator and the service's own mail
 * simulator, both with faults and both in this JVM (so that killing an instance never kills them),
 * and payments-service instances as separate processes ({@code java -jar}), so that the nemesis can
 * {@code kill -9} and {@code SIGSTOP} them. The instances reach the payments database through
 * forwarders of the run's own, which the nemesis can cut; each instance writes every answer it
 * gives to an access log ({@link #serverErrors}). Every instance sends its receipt mails to the one
 * mail simulator ({@code payments.mail.url}) and runs its event flow with the service's fault
 * injection on ({@code payments.events.faults.*}).
 */
final class Cluster implements AutoCloseable {

  private final Path serviceJar;
  private final Path logs;
  private final EmbeddedPostgres embedded;
  private final Path embeddedDir;
  private final String adminUrl;
  private final String user;
  private final String password;
  private final String paymentsDb;
  private final String providerDb;
  private final String mailDb;
  final ProviderSimulator provider;
  private final AutoCloseable mail;
  private final int mailPort;
  private final List<Instance> instances = new ArrayList<>();

  /**
   * The second shard's payments database, when the run is on two shards ({@link #splitIntoShards}):
   * the first is {@link #paymentsDb}. Null: one payments database.
   */
  private volatile String shardB;

  /** The database that reads both shards as one (created at its first use); null without shards. */
  private String bothShards;

  /**
   * The payments database's server of its own (a primary, with or without a standby), or null: it
   * is on the one server.
   */
  private final ReplicatedPostgres replicated;

  /**
   * The instances' way to the payments database: one forwarder per server, which the nemesis can
   * cut; keyed by the server's port. The accounting and the nemesis connect directly.
   */
  private final Map<Integer, Balancer> databaseLinks = new LinkedHashMap<>();

  /** {@code libfaketime}, when the instances' clocks can be skewed; else null. */
  private volatile Path libfaketime;

  /**
   * A master key and an HMAC key of this run's own, the same for every instance and every restart:
   * outside the embedded demo the service takes none of the demo's (its demo/DemoSecrets).
   */
  private final String masterKey = StaticKeyProvider.newKeyBase64();

  private final String hmacKey = StaticKeyProvider.newKeyBase64();

  /** One payments-service process; restarted on the same port after a kill. */
  final class Instance {
    final String name;
    final int port;
    final List<String> extra;
    volatile Process process;
    volatile boolean paused;
    volatile boolean starting;

    Instance(String name, int port, List<String> extra) {
      this.name = name;
      this.port = port;
      this.extra = extra;
    }

    /**
     * The file its clock's offset is read from, when clocks can be skewed ({@code libfaketime}).
     */
    Path clockFile() {
      return logs.resolve(name + ".faketime");
    }

    /**
     * Sets the instance's clock {@code offset} away from the machine's (a step, as an NTP
     * correction makes), seen by it within a second; only when clocks can be skewed.
     */
    void skewClock(Duration offset) throws IOException {
      long seconds = offset.toSeconds();
      Files.writeString(clockFile(), (seconds < 0 ? "" : "+") + seconds + "s\n");
    }

    boolean alive() {
      return process != null && process.isAlive();
    }

    void signal(String signal) throws IOException, InterruptedException {
      new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid()))
          .inheritIO()
          .start()
          .waitFor();
    }
  }

  /**
   * The mail simulator's faults, in the service's own format ({@code payments.mail.faults}): a mail
   * sent and its answer dropped, and 503 with nothing sent.
   */
  static final String MAIL_FAULTS = "drop-after-accept:0.05,unavailable:0.05";

  /**
   * The service's event fault injection ({@code payments.events.faults.*}, {@code EventFaults}):
   * the relay's acknowledgement lost after the transport delivered (the relay sends again), and a
   * consumer failing after its writes (its transaction rolls back, the message comes again).
   */
  static final double LOST_ACK = 0.05;

  static final double CONSUMER_FAILURE = 0.05;

  Cluster(Path serviceJar, Path logs, Map<Fault, Double> faults) throws Exception {
    this(serviceJar, logs, faults, null);
  }

  /**
   * A primary from the machine's PostgreSQL 15 binaries and one standby named {@code standby},
   * streaming as {@code replication}: for {@link #Cluster(Path, Path, Map, ReplicatedPostgres)}.
   */
  static ReplicatedPostgres primaryAndStandby(Replication replication) {
    ReplicatedPostgres pair = ReplicatedPostgres.startPrimary();
    try {
      pair.addStandby("standby", replication);
      return pair;
    } catch (RuntimeException e) {
      pair.close();
      throw e;
    }
  }

  /**
   * A cluster whose payments database is on {@code replicated} (which it closes with itself), or,
   * when that is null, on the one server with the provider's and the mail simulator's.
   */
  Cluster(Path serviceJar, Path logs, Map<Fault, Double> faults, ReplicatedPostgres replicated)
      throws Exception {
    this.replicated = replicated;
    this.serviceJar = serviceJar;
    this.logs = Files.createDirectories(logs);
    String run = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    paymentsDb = "idemkit_chaos_" + run;
    providerDb = "idemkit_chaos_" + run + "_provider";
    mailDb = "idemkit_chaos_" + run + "_mail";
    String server = System.getenv("IDEMKIT_TEST_JDBC_URL");
    if (server != null && !server.isBlank()) {
      embedded = null;
      embeddedDir = null;
      adminUrl = server;
      user = System.getenv().getOrDefault("IDEMKIT_TEST_JDBC_USER", "postgres");
      password = System.getenv().getOrDefault("IDEMKIT_TEST_JDBC_PASSWORD", "");
    } else {
      embeddedDir = Files.createTempDirectory("idemkit-chaos-pg");
      embedded = IdemkitDatabase.embeddedServer(embeddedDir, 300).start();
      adminUrl = "jdbc:postgresql://localhost:" + embedded.getPort() + "/postgres";
      user = "postgres";
      password = "";
    }
    ProviderSimulator startedProvider = null;
    AutoCloseable startedMail = null;
    try {
      try (Connection c = paymentsServer();
          Statement s = c.createStatement()) {
        s.execute("create database " + paymentsDb);
      }
      try (Connection c = admin();
          Statement s = c.createStatement()) {
        s.execute("create database " + providerDb);
        s.execute("create database " + mailDb);
      }
      startedProvider =
          ProviderSimulator.start(
              ProviderSimulator.Config.defaults(0)
                  .withProbabilities(faults)
                  .withLatency(Duration.ofMillis(300))
                  .withLateAnswer(Duration.ofSeconds(4)),
              dataSource(providerDb));
      startedMail = startMailSimulator(serviceJar, MAIL_FAULTS, dataSource(mailDb));
      mailPort = (Integer) startedMail.getClass().getMethod("port").invoke(startedMail);
    } catch (Exception | Error e) {
      // A cluster that could not start leaves nothing behind: simulators, databases, server.
      for (AutoCloseable started : new AutoCloseable[] {startedMail, startedProvider}) {
        if (started != null) {
          try {
            started.close();
          } catch (Exception closing) {
            e.addSuppressed(closing);
          }
        }
      }
      try {
        dropDatabases();
      } catch (Exception dropping) {
        e.addSuppressed(dropping);
      }
      if (replicated != null) {
        replicated.close();
      }
      throw e;
    }
    provider = startedProvider;
    mail = startedMail;
    if (replicated != null) {
      for (ReplicatedPostgres.Node node : replicated.nodes()) {
        databaseLinks.put(node.port(), new Balancer(List.of(Balancer.loopback(node.port()))));
      }
    } else {
      URI direct = URI.create(adminUrl.substring("jdbc:".length()));
      int port = direct.getPort() < 0 ? 5432 : direct.getPort();
      databaseLinks.put(
          port, new Balancer(List.of(() -> new InetSocketAddress(direct.getHost(), port))));
    }
  }

  /**
   * Where {@code libfaketime} is on this machine ({@code IDEMKIT_CHAOS_LIBFAKETIME}, else where
   * Debian and Ubuntu install it), if it is: what skewing an instance's clock needs.
   */
  static Optional<Path> findLibfaketime() {
    String configured = System.getenv("IDEMKIT_CHAOS_LIBFAKETIME");
    Stream<String> candidates =
        configured != null && !configured.isBlank()
            ? Stream.of(configured)
            : Stream.of(
                "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                "/usr/lib/faketime/libfaketime.so.1",
                "/usr/local/lib/faketime/libfaketime.so.1");
    return candidates.map(Path::of).filter(Files::isRegularFile).findFirst();
  }

  /**
   * From the next start on, every instance runs with {@code libfaketime} preloaded, its clock
   * offset read from its {@link Instance#clockFile} (none at first). Only the wall clock is moved:
   * the monotonic clock, which timeouts and pools measure with, stays the machine's.
   */
  void makeClocksSkewable(Path libfaketime) {
    this.libfaketime = libfaketime;
  }

  /** Cuts the network between the instances and the payments database (every server). */
  void cutDatabaseNetwork() {
    databaseLinks.values().forEach(Balancer::cut);
  }

  /** Mends it: what was held goes on. */
  void healDatabaseNetwork() {
    databaseLinks.values().forEach(Balancer::heal);
  }

  /** The instances' URL of a payments database: through the {@link #databaseLinks}. */
  private String instanceUrl(String database) {
    if (replicated != null) {
      return replicated.jdbcUrl(database, port -> databaseLinks.get(port).port());
    }
    String direct = url(database);
    URI uri = URI.create(direct.substring("jdbc:".length()));
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    Balancer link = databaseLinks.values().iterator().next();
    return "jdbc:postgresql://127.0.0.1:" + link.port() + "/" + database + query;
  }

  /**
   * The instances' settings for the payments database: the one database, or the two shards ({@code
   * idemkit.shards.a} holds the tenant directory).
   */
  private List<String> databaseSettings() {
    if (shardB == null) {
      return List.of(
          "--spring.datasource.url=" + instanceUrl(paymentsDb),
          "--spring.datasource.username=" + user,
          "--spring.datasource.password=" + password,
          "--spring.datasource.hikari.maximum-pool-size=12");
    }
    List<String> settings = new ArrayList<>();
    Map<String, String> shards = Map.of("a", paymentsDb, "b", shardB);
    for (String shard : List.of("a", "b")) {
      String prefix = "--idemkit.shards." + shard + ".";
      settings.add(prefix + "url=" + instanceUrl(shards.get(shard)));
      settings.add(prefix + "username=" + user);
      settings.add(prefix + "password=" + password);
      settings.add(prefix + "maximum-pool-size=8");
    }
    settings.add("--idemkit.shards-directory-refresh=PT0.5S");
    return settings;
  }

  /**
   * Puts the payments on two databases of the payments server, the service's shards {@code a} and
   * {@code b}, and gives the run several tenants to move between them ({@link #tenants}); before
   * any instance starts.
   */
  void splitIntoShards() throws SQLException {
    if (replicated != null) {
      throw new IllegalStateException("Shards are two databases of the run's one server");
    }
    String second = paymentsDb + "_b";
    try (Connection c = paymentsServer();
        Statement s = c.createStatement()) {
      s.execute("create database " + second);
    }
    shardB = second;
  }

  /** Whether the payments are on two shards. */
  boolean sharded() {
    return shardB != null;
  }

  /** The payments databases: the one, or both shards'. */
  List<String> paymentsDatabases() {
    return shardB == null ? List.of(paymentsDb) : List.of(paymentsDb, shardB);
  }

  /** A connection to one of {@link #paymentsDatabases}. */
  Connection paymentsDatabase(String database) throws SQLException {
    return DriverManager.getConnection(paymentsUrl(database), user, password);
  }

  /**
   * The run's tenants, each with its API key ({@code payments.api-keys.<key>=<tenant>}): one, or
   * four on shards, so that one can move while the others are served.
   */
  Map<String, String> tenants() {
    return tenants(shardB != null);
  }

  /** The tenants of a run on shards, or of one on a single database, by API key. */
  static Map<String, String> tenants(boolean sharded) {
    if (!sharded) {
      return Map.of(ClientProcess.API_KEY, "tenant_chaos");
    }
    Map<String, String> tenants = new LinkedHashMap<>();
    for (int i = 0; i < SHARDED_TENANTS; i++) {
      tenants.put(ClientProcess.API_KEY + "_" + i, "tenant_chaos_" + i);
    }
    return tenants;
  }

  /** How many tenants a run on shards has. */
  static final int SHARDED_TENANTS = 4;

  /** The operators' API key of the run (the nemesis moves tenants with it). */
  static final String ADMIN_API_KEY = "sk_chaos_operator";

  /**
   * Every answer with a 5xx status other than 503 that an instance of {@code tag}'s run gave, as
   * its access log wrote it: a fault the service did not turn into "unavailable, retry" (the
   * instances log every answer, unbuffered, so a killed one loses none it sent).
   */
  List<String> serverErrors(String tag) throws IOException {
    List<String> errors = new ArrayList<>();
    try (Stream<Path> files = Files.list(logs)) {
      for (Path log :
          files
              .filter(f -> f.getFileName().toString().matches("service-.*-" + tag + "-access.*"))
              .sorted()
              .toList()) {
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
          String[] fields = line.split(" ", 3);
          if (fields.length > 1 && fields[1].startsWith("5") && !fields[1].equals("503")) {
            errors.add(log.getFileName() + ": " + line);
          }
        }
      }
    }
    return errors;
  }

  /**
   * The payments service's own mail simulator ({@code demo.MailSimulator}, the one its demo mode
   * runs in-process), loaded from the service jar's classes into this JVM: idempotent per key,
   * counting what it sent ({@code GET /messages?key=K}), with {@code faults} at random.
   */
  private static AutoCloseable startMailSimulator(Path serviceJar, String faults, DataSource ds)
      throws Exception {
    URL classes = new URL("jar:" + serviceJar.toUri() + "!/BOOT-INF/classes/");
    // Not closed: its classes serve the simulator until this JVM ends.
    URLClassLoader loader = new URLClassLoader(new URL[] {classes}, Cluster.class.getClassLoader());
    Class<?> simulator =
        Class.forName("dev.idemkit.examples.payments.demo.MailSimulator", true, loader);
    return (AutoCloseable)
        simulator
            .getMethod("start", int.class, String.class, DataSource.class, JsonMapper.class)
            .invoke(null, 0, faults, ds, JsonMapper.builder().build());
  }

  /** The mail simulator's base URL. */
  String mailUrl() {
    return "http://127.0.0.1:" + mailPort;
  }

  /**
   * The mail simulator as the accounting reads it: its counter ({@code GET /messages?key=K} →
   * {@code {"delivered": n, ...}}) and every key it accepted (its table).
   */
  Accounting.Mail mail() {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    return new Accounting.Mail() {
      @Override
      public int delivered(String key) throws Exception {
        HttpRequest get =
            HttpRequest.newBuilder(
                    URI.create(
                        mailUrl()
                            + "/messages?key="
                            + URLEncoder.encode(key, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5))
                .build();
        HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
        JsonNode delivered = Json.read(r.body()).path("delivered");
        if (r.statusCode() != 200 || !delivered.isIntegralNumber()) {
          throw new IllegalStateException(
              "mail simulator answered " + r.statusCode() + " " + r.body());
        }
        return delivered.asInt();
      }

      @Override
      public Set<String> keys() throws SQLException {
        Set<String> keys = new HashSet<>();
        try (Connection c = DriverManager.getConnection(url(mailDb), user, password);
            Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("select idempotency_key from mail_message")) {
          while (rs.next()) {
            keys.add(rs.getString(1));
          }
        }
        return keys;
      }
    };
  }

  Connection admin() throws SQLException {
    return DriverManager.getConnection(adminUrl, user, password);
  }

  /**
   * The payments database as the accounting reads it; on shards, a database of the run's own whose
   * tables are views over both shards' ({@code postgres_fdw}), so that every count and sum covers
   * every tenant wherever it is. Read it once the moves are over: during one, a tenant's rows are
   * on both shards for a moment.
   */
  Connection payments() throws SQLException {
    if (shardB == null) {
      return DriverManager.getConnection(paymentsUrl(paymentsDb), user, password);
    }
    synchronized (this) {
      if (bothShards == null) {
        bothShards = paymentsDb + "_both";
        createBothShards(bothShards);
      }
    }
    return DriverManager.getConnection(url(bothShards), user, password);
  }

  /**
   * Creates {@code database} with each table of the shards as a view of both (the tables must
   * exist: after an instance migrated them).
   */
  private void createBothShards(String database) throws SQLException {
    try (Connection c = admin();
        Statement s = c.createStatement()) {
      s.execute("create database " + database);
    }
    URI server = URI.create(adminUrl.substring("jdbc:".length()));
    int port = server.getPort() < 0 ? 5432 : server.getPort();
    try (Connection c = DriverManager.getConnection(url(database), user, password);
        Statement s = c.createStatement()) {
      s.execute("create extension postgres_fdw");
      Map<String, String> shards = Map.of("shard_a", paymentsDb, "shard_b", shardB);
      for (String shard : List.of("shard_a", "shard_b")) {
        s.execute(
            "create server %s foreign data wrapper postgres_fdw options (host '%s', port '%d', dbname '%s')"
                .formatted(shard, server.getHost(), port, shards.get(shard)));
        s.execute(
            password.isEmpty()
                ? "create user mapping for current_user server %s options (user '%s')"
                    .formatted(shard, user)
                : "create user mapping for current_user server %s options (user '%s', password '%s')"
                    .formatted(shard, user, password.replace("'", "''")));
        s.execute("create schema " + shard);
        s.execute("import foreign schema public from server %s into %s".formatted(shard, shard));
      }
      List<String> tables = new ArrayList<>();
      try (ResultSet rs =
          s.executeQuery(
              // The tables of both shards (the tenant directory is on shard a only).
              "select foreign_table_name from information_schema.foreign_tables"
                  + " where foreign_table_schema = 'shard_a'"
                  + " intersect select foreign_table_name from information_schema.foreign_tables"
                  + " where foreign_table_schema = 'shard_b'")) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      for (String table : tables) {
        s.execute(
            "create view public.%s as select * from shard_a.%s union all select * from shard_b.%s"
                .formatted(table, table, table));
      }
    }
  }

  /** The server that holds the payments database now (the primary, when replicated). */
  Connection paymentsServer() throws SQLException {
    return replicated == null
        ? admin()
        : DriverManager.getConnection(paymentsUrl("postgres"), user, password);
  }

  /** The payments database's primary and standby, if it has them. */
  Optional<ReplicatedPostgres> replicated() {
    return Optional.ofNullable(replicated);
  }

  /** A database on the payments database's server: over both servers when replicated. */
  private String paymentsUrl(String database) {
    return replicated == null ? url(database) : replicated.jdbcUrl(database);
  }

  Connection providerDatabase() throws SQLException {
    return DriverManager.getConnection(url(providerDb), user, password);
  }

  /** The admin URL with another database in place of its own. */
  private String url(String database) {
    URI uri = URI.create(adminUrl.substring("jdbc:".length()));
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    return "jdbc:postgresql://" + uri.getRawAuthority() + "/" + database + query;
  }

  private DataSource dataSource(String database) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url(database));
    ds.setUser(user);
    ds.setPassword(password);
    return ds;
  }

  List<Instance> instances() {
    return instances;
  }

  /** Starts an instance on a free port and waits until it is healthy. */
  Instance start(String name, List<String> extra) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Instance instance = new Instance(name, port, extra);
    instances.add(instance);
    launch(instance);
    return instance;
  }

  /** Starts the instance's process again (after a kill), on its port, and waits for health. */
  void launch(Instance instance) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-XX:TieredStopAtLevel=1",
                "-jar",
                serviceJar.toString(),
                "--server.port=" + instance.port,
                "--server.address=127.0.0.1",
                "--payments.provider.url=http://127.0.0.1:" + provider.port(),
                "--payments.provider.timeout=PT2S",
                "--payments.mail.url=" + mailUrl(),
                "--payments.mail.timeout=PT1S",
                "--payments.events.faults.lost-ack=" + LOST_ACK,
                "--payments.events.faults.consumer-failure=" + CONSUMER_FAILURE,
                // Retries of events, messages and mails at most 4 s apart, so the run drains soon
                // after the faults stop.
                "--payments.events.max-backoff=PT4S",
                "--idemkit.lease=PT3S",
                // Outside the embedded demo the secret that signs issued keys is required, and
                // it is the same on every instance.
                "--idemkit.issued-keys.secret=chaos-run-issued-keys-secret",
                "--payments.admin-api-keys." + ADMIN_API_KEY + "=chaos_operator",
                "--idemkit.protection.encryption.master-keys.chaos-mk1=" + masterKey,
                "--idemkit.protection.encryption.current-master-key=chaos-mk1",
                "--idemkit.protection.fingerprint.hmac-keys.chaos-fk1=" + hmacKey,
                "--idemkit.protection.fingerprint.current-hmac-key=chaos-fk1",
                "--idemkit.recovery.interval=PT0.5S",
                "--spring.jmx.enabled=false",
                "--logging.level.root=warn",
                // Every answer, with its status, for serverErrors().
                "--server.tomcat.accesslog.enabled=true",
                "--server.tomcat.accesslog.directory=" + logs.toAbsolutePath(),
                "--server.tomcat.accesslog.prefix=" + instance.name + "-access",
                "--server.tomcat.accesslog.suffix=.log",
                "--server.tomcat.accesslog.rotate=false",
                "--server.tomcat.accesslog.buffered=false",
                "--server.tomcat.accesslog.pattern=%{yyyy-MM-dd'T'HH:mm:ss.SSS}t %s %m %U %Dms"));
    command.addAll(databaseSettings());
    // The run's tenants, as keys of the deployment's own, and its own keys.
    tenants().forEach((key, tenant) -> command.add("--payments.api-keys." + key + "=" + tenant));
    command.addAll(instance.extra);
    instance.paused = false;
    ProcessBuilder builder = new ProcessBuilder(command);
    Path faketime = libfaketime;
    if (faketime != null) {
      if (!Files.exists(instance.clockFile())) {
        instance.skewClock(Duration.ZERO);
      }
      builder.environment().put("LD_PRELOAD", faketime.toString());
      builder.environment().put("FAKETIME_TIMESTAMP_FILE", instance.clockFile().toString());
      builder.environment().put("FAKETIME_CACHE_DURATION", "1");
      builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
      // Without these, the JVM's timed waits return at once (its threads spin) and every file
      // look-up pays for faked times.
      builder.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
      builder.environment().put("NO_FAKE_STAT", "1");
    }
    instance.process =
        builder
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(logs.resolve(instance.name + ".log").toFile()))
            .start();
    awaitHealthy(instance, Duration.ofMinutes(6));
  }

  private static void awaitHealthy(Instance instance, Duration timeout) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + instance.port + "/actuator/health"))
            .timeout(Duration.ofSeconds(3))
            .build();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (!instance.process.isAlive()) {
        throw new IllegalStateException(instance.name + " died at start-up; see its log");
      }
      try {
        HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
        if ("UP".equals(Json.read(r.body()).path("status").stringValue(null))) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(instance.name + " was not healthy within " + timeout);
      }
      Thread.sleep(200);
    }
  }

  /** Stops every instance (healing pauses first); the database and provider stay. */
  void stopInstances() throws Exception {
    for (Instance i : instances) {
      if (i.alive()) {
        i.signal("CONT");
        i.process.destroyForcibly().waitFor();
      }
    }
    instances.clear();
  }

  @Override
  public void close() throws Exception {
    stopInstances();
    for (Balancer link : databaseLinks.values()) {
      link.close();
    }
    provider.close();
    mail.close();
    dropDatabases();
    if (replicated != null) {
      replicated.close();
    }
  }

  /** The run's databases, or the embedded server with its directory. */
  private void dropDatabases() throws Exception {
    if (embedded != null) {
      embedded.close();
      try (Stream<Path> files = Files.walk(embeddedDir)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      }
    } else {
      try (Connection c = admin();
          Statement s = c.createStatement()) {
        if (bothShards != null) {
          s.execute("drop database if exists " + bothShards + " with (force)");
        }
        if (shardB != null) {
          s.execute("drop database if exists " + shardB + " with (force)");
        }
        s.execute("drop database if exists " + paymentsDb + " with (force)");
        s.execute("drop database if exists " + providerDb + " with (force)");
        s.execute("drop database if exists " + mailDb + " with (force)");
      }
    }
  }
}
