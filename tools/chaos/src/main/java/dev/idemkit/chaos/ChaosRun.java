package dev.idemkit.chaos;

import dev.idemkit.examples.provider.Fault;
import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The chaos run: two payments-service instances on one database behind a loopback balancer, the
 * provider simulator and one shared mail simulator with faults, the service's event fault
 * injection, retrying clients ({@link ClientProcess}) creating payments and orders, and a {@link
 * Nemesis}; then a {@link Drain} (recovery, outbox, inboxes, receipt mails), every stored answer
 * asked for again ({@link ClientProcess#askAgain}), the {@link Accounting} check, the {@link
 * History} (JSON lines, and Jepsen EDN with the observed effects as a final read) and the {@link
 * Report}. This class runs those steps in order; each lives in its own class.
 *
 * <pre>
 * java -jar tools/chaos/target/idemkit-chaos.jar --duration PT10M --clients 8 [--broken-store find-then-insert]
 *     [--database replicated-sync --nemesis-actions failover,terminate-connections]
 * </pre>
 *
 * The options are {@link ChaosOptions}'; the exit status is {@link Outcome#exitStatus}'s.
 */
public final class ChaosRun {

  /**
   * How a run goes. {@code database}: {@code single} (one server), {@code replicated-sync} or
   * {@code replicated-async} (the payments database on a primary and a standby, {@link
   * ReplicatedPostgres}); {@code nemesisActions}: the faults the nemesis cycles through ({@link
   * Nemesis#ACTIONS}).
   */
  record Config(
      Path serviceJar,
      Path out,
      Duration duration,
      int clients,
      boolean nemesis,
      String brokenStore,
      Duration requestTimeout,
      long seed,
      String database,
      List<String> nemesisActions) {

    static Config defaults(Path serviceJar, Path out) {
      return new Config(
          serviceJar,
          out,
          Duration.ofSeconds(60),
          8,
          true,
          null,
          Duration.ofSeconds(3),
          1,
          "single",
          Nemesis.DEFAULT_ACTIONS);
    }

    Config withDuration(Duration d) {
      return new Config(
          serviceJar,
          out,
          d,
          clients,
          nemesis,
          brokenStore,
          requestTimeout,
          seed,
          database,
          nemesisActions);
    }

    Config withBrokenStore(String variant, Duration timeout) {
      return new Config(
          serviceJar,
          out,
          duration,
          clients,
          nemesis,
          variant,
          timeout,
          seed,
          database,
          nemesisActions);
    }

    Config withNemesis(boolean on) {
      return new Config(
          serviceJar,
          out,
          duration,
          clients,
          on,
          brokenStore,
          requestTimeout,
          seed,
          database,
          nemesisActions);
    }

    /**
     * The payments database where {@code database} says (one of {@link ChaosOptions}' {@code
     * --database}), with the nemesis doing {@code actions}.
     */
    Config withFaults(String database, List<String> actions) {
      return new Config(
          serviceJar,
          out,
          duration,
          clients,
          true,
          brokenStore,
          requestTimeout,
          seed,
          database,
          actions);
    }

    /** How the payments database is replicated, if it is. */
    Optional<Replication> replication() {
      return switch (database) {
        case "replicated-sync" -> Optional.of(Replication.SYNCHRONOUS);
        case "replicated-async" -> Optional.of(Replication.ASYNCHRONOUS);
        default -> Optional.empty();
      };
    }
  }

  /** The provider's faults during a run. */
  static final Map<Fault, Double> FAULTS =
      Map.of(
          Fault.LATENCY, 0.2,
          Fault.ERROR_BEFORE_CHARGE, 0.05,
          Fault.DECLINE, 0.05,
          Fault.DROP_AFTER_CHARGE, 0.05,
          Fault.TIMEOUT_AFTER_CHARGE, 0.05);

  /** Every fault injected besides the nemesis's, for the report. */
  static final String FAULT_SUMMARY =
      "provider "
          + new TreeMap<>(FAULTS)
          + "; mail simulator "
          + Cluster.MAIL_FAULTS
          + "; events lost-ack "
          + Cluster.LOST_ACK
          + ", consumer-failure "
          + Cluster.CONSUMER_FAILURE;

  private ChaosRun() {}

  /**
   * Runs, then exits with the status (also when a start-up failure left threads running: the JVM
   * must end for a script or CI to read the result).
   */
  public static void main(String[] args) {
    int status;
    try {
      status = runMain(args);
    } catch (ChaosOptions.UsageException usage) {
      System.err.println("chaos: " + usage.getMessage());
      System.err.print(ChaosOptions.usage());
      status = 2;
    } catch (Exception e) {
      System.err.println("chaos: the run could not complete: " + e);
      status = 2;
    }
    System.exit(status);
  }

  /** The run the arguments ask for, on a cluster of its own; answers the exit status. */
  static int runMain(String[] args) throws Exception {
    Optional<Config> parsed = ChaosOptions.parse(args, System.out);
    if (parsed.isEmpty()) {
      return 0;
    }
    Config config = parsed.get();
    if (!Files.isRegularFile(config.serviceJar())) {
      throw new ChaosOptions.UsageException(
          "no service jar at "
              + config.serviceJar().toAbsolutePath()
              + ": build it (./mvnw -pl examples/payments-service -am package -DskipTests) or"
              + " pass --service-jar");
    }
    Outcome outcome;
    Progress.say(
        "starting PostgreSQL, the provider and the mail simulator (logs under "
            + config.out().resolve("logs")
            + ")");
    ReplicatedPostgres replicated = null;
    if (config.replication().isPresent()) {
      Progress.say("starting a PostgreSQL primary and its " + config.database() + " standby");
      replicated = Cluster.primaryAndStandby(config.replication().get());
    } else if (config.database().equals("own")) {
      Progress.say("starting a PostgreSQL server of the run's own for the payments database");
      replicated = ReplicatedPostgres.startPrimary();
    }
    try (Cluster cluster =
        new Cluster(config.serviceJar(), config.out().resolve("logs"), FAULTS, replicated)) {
      outcome = run(cluster, config);
    }
    return outcome.exitStatus(System.err);
  }

  /** One run on a cluster whose database and provider may outlive it (instances do not). */
  static Outcome run(Cluster cluster, Config config) throws Exception {
    String tag =
        Long.toString(System.currentTimeMillis(), 36)
            + UUID.randomUUID().toString().substring(0, 4);
    Path out = Files.createDirectories(config.out());
    Path historyFile = out.resolve("history-" + tag + ".jsonl");
    if (config.nemesis() && config.nemesisActions().contains("skew-clocks")) {
      cluster.makeClocksSkewable(
          Cluster.findLibfaketime()
              .orElseThrow(() -> new ChaosOptions.UsageException(ChaosOptions.NO_LIBFAKETIME)));
    }
    if (config.database().equals("shards") && !cluster.sharded()) {
      Progress.say("splitting the payments database into two shards, a and b");
      cluster.splitIntoShards();
    }
    startInstances(cluster, config, tag);
    List<Supplier<InetSocketAddress>> ports = new ArrayList<>();
    for (Cluster.Instance i : cluster.instances()) {
      ports.add(Balancer.loopback(i.port));
    }
    try (Balancer balancer = new Balancer(ports);
        History history = new History(historyFile)) {
      Nemesis nemesis =
          new Nemesis(
              cluster,
              history,
              Duration.ofSeconds(6),
              config.requestTimeout(),
              config.seed(),
              config.nemesisActions());
      List<ClientProcess> clients = runClients(config, tag, balancer.port(), history, nemesis);
      Progress.say(
          "clients done; healing every fault and draining (at most "
              + Drain.MAX.toSeconds()
              + " s)");
      nemesis.heal();
      List<String> undrained = Drain.await(cluster, Drain.MAX);
      Progress.say(
          (undrained.isEmpty() ? "drained" : "not drained: " + String.join(", ", undrained))
              + "; asking for every stored answer again");
      askAgain(clients);
      Progress.say("accounting");
      Accounting.Result result;
      try (Connection payments = cluster.payments();
          Connection provider = cluster.providerDatabase()) {
        result =
            Accounting.check(
                history.ops(),
                payments,
                provider,
                cluster.mail(),
                tag,
                Accounting.LedgerCheck.CONSERVATION);
      }
      Path edn = out.resolve("history-" + tag + ".edn");
      history.writeEdn(edn, result.observed());
      Path report = out.resolve("report-" + tag + ".json");
      Outcome outcome =
          new Outcome(
              result,
              nemesis.counts(),
              cluster.serverErrors(tag),
              undrained,
              historyFile,
              edn,
              report);
      Files.writeString(report, Report.json(config, outcome), StandardCharsets.UTF_8);
      System.out.println(Report.summary(config, outcome));
      return outcome;
    } finally {
      cluster.stopInstances();
    }
  }

  /** Starts the run's two instances side by side (a start can take minutes on a loaded machine). */
  private static void startInstances(Cluster cluster, Config config, String tag) throws Exception {
    List<String> extra = new ArrayList<>();
    if (config.brokenStore() != null) {
      extra.add("--payments.demo.broken-store=" + config.brokenStore());
    }
    Progress.say(
        "starting two payments-service instances (on a loaded machine this can take minutes;"
            + " their logs: service-*-"
            + tag
            + ".log)");
    long starting = System.nanoTime();
    ExecutorService starts = Executors.newFixedThreadPool(2);
    try {
      Future<?> a = starts.submit(() -> cluster.start("service-a-" + tag, extra));
      Future<?> b = starts.submit(() -> cluster.start("service-b-" + tag, extra));
      a.get();
      b.get();
    } finally {
      starts.shutdownNow();
    }
    Progress.say(
        "both instances serving after "
            + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - starting)
            + " s; "
            + config.clients()
            + " clients run for "
            + config.duration()
            + ", nemesis "
            + (config.nemesis() ? "on" : "off"));
  }

  /**
   * The clients' part: the nemesis (when on) and the client processes for the run's duration, with
   * a progress line every {@link Progress#EVERY}; returns when every client and the nemesis have
   * stopped.
   */
  private static List<ClientProcess> runClients(
      Config config, String tag, int port, History history, Nemesis nemesis) throws Exception {
    Thread nemesisThread = new Thread(nemesis, "chaos-nemesis");
    if (config.nemesis()) {
      nemesisThread.start();
    }
    long begun = System.nanoTime();
    long deadline = begun + config.duration().toNanos();
    ScheduledExecutorService ticker = Progress.ticker(begun, config.duration(), history, nemesis);
    ExecutorService clients = Executors.newFixedThreadPool(config.clients());
    List<Future<?>> running = new ArrayList<>();
    List<ClientProcess> all = new ArrayList<>();
    for (int p = 0; p < config.clients(); p++) {
      ClientProcess client = new ClientProcess(p, tag, port, config, history);
      all.add(client);
      running.add(
          clients.submit(
              () -> {
                client.runUntil(deadline);
                return null;
              }));
    }
    try {
      for (Future<?> f : running) {
        f.get();
      }
    } finally {
      ticker.shutdownNow();
    }
    Progress.say(Progress.line(config.duration(), config.duration(), history.ops(), nemesis));
    clients.shutdown();
    nemesis.stop();
    if (config.nemesis()) {
      nemesisThread.join();
    }
    return all;
  }

  /**
   * Every client asks for its stored answers again ({@link ClientProcess#askAgain}), side by side.
   */
  private static void askAgain(List<ClientProcess> clients) throws Exception {
    ExecutorService asking = Executors.newFixedThreadPool(clients.size());
    try {
      List<Future<?>> done = new ArrayList<>();
      for (ClientProcess c : clients) {
        done.add(asking.submit(c::askAgain));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      asking.shutdownNow();
    }
  }
}
