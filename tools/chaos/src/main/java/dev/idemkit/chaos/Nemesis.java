package dev.idemkit.chaos;

import dev.idemkit.chaos.Cluster.Instance;
import dev.idemkit.testing.postgres.ReplicatedPostgres;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Node;
import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;

/**
 * Breaks things while the clients work, one fault at a time, always leaving one instance serving:
 * {@code kill -9} an instance and start it again (its relay, consumers and mail sender die with it,
 * mid-batch), pause one ({@code SIGSTOP}) past its lease and resume it ({@code SIGCONT}), terminate
 * the service's database connections ({@code pg_terminate_backend}), or stall every consumer: hold
 * the inbox table locked ({@code lock table idemkit_inbox in exclusive mode}) for 3–5 s, so that
 * consumers, and the relays handing them events (the embedded transport delivers inside the relay's
 * round), wait with their batches open, while the clients go on creating payments. Beyond these
 * four: fail the payments database over to its standby ({@code failover}, {@link
 * ReplicatedPostgres}), freeze it ({@code SIGSTOP} of its server), cut the network to it ({@link
 * Cluster#cutDatabaseNetwork}), step the instances' clocks minutes apart ({@code libfaketime}), and
 * kill an instance while it shuts down. Each action goes into the history as the nemesis process's
 * {@code info}.
 *
 * <p>The service has no switch to stop one instance's relay or consumers alone; beyond the kills
 * and the stall, the run turns on the service's own event fault injection on every instance (lost
 * relay acknowledgements, consumers failing after their writes: {@link Cluster#LOST_ACK}, {@link
 * Cluster#CONSUMER_FAILURE}) and mail faults at the shared mail simulator.
 */
final class Nemesis implements Runnable {

  /**
   * The history's process for restarts, which run in a thread of their own alongside the next
   * actions: a process has one operation at a time in Jepsen's model.
   */
  static final String RESTARTS = "nemesis-restart";

  private final Cluster cluster;
  private final History history;
  private final Duration interval;
  private final Duration requestTimeout;
  private final Random random;
  private final List<String> actions;
  private volatile boolean stopped;
  private final Map<String, AtomicInteger> done = new LinkedHashMap<>();
  private final List<Thread> restarts = new CopyOnWriteArrayList<>();

  /**
   * Whether the last failover's old primary is being rebuilt: the pair is then its rebuild thread's
   * alone ({@link ReplicatedPostgres} is not thread-safe).
   */
  private final AtomicBoolean rebuilding = new AtomicBoolean();

  /** A move of {@code tenant} to {@code shard}. */
  private record Move(String tenant, String shard) {}

  /** A move that was not answered (null: none), to run again. */
  private volatile Move unfinishedMove;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** The faults a run has unless told otherwise, in the order the nemesis cycles through them. */
  static final List<String> DEFAULT_ACTIONS =
      List.of("pause", "terminate-connections", "kill", "stall-consumers");

  /**
   * Every fault the nemesis knows. {@code failover} needs a standby, {@code freeze-database} a
   * database server of the run's own ({@link ReplicatedPostgres}), {@code skew-clocks} {@code
   * libfaketime} ({@link Cluster#findLibfaketime}), {@code move-tenant} the payments on two shards
   * ({@link Cluster#splitIntoShards}).
   */
  static final List<String> ACTIONS =
      List.of(
          "pause",
          "terminate-connections",
          "kill",
          "stall-consumers",
          "failover",
          "freeze-database",
          "cut-network",
          "skew-clocks",
          "kill-during-shutdown",
          "move-tenant");

  /**
   * A nemesis cycling through {@code actions} (of {@link #ACTIONS}); a fault that must outlast a
   * client's request (a frozen database, a cut network) lasts longer than {@code requestTimeout}.
   */
  Nemesis(
      Cluster cluster,
      History history,
      Duration interval,
      Duration requestTimeout,
      long seed,
      List<String> actions) {
    this.cluster = cluster;
    this.history = history;
    this.interval = interval;
    this.requestTimeout = requestTimeout;
    this.random = new Random(seed);
    this.actions = List.copyOf(actions);
    ACTIONS.forEach(action -> done.put(action, new AtomicInteger()));
  }

  /** How many times {@code action} (of {@link #ACTIONS}) was done so far. */
  int count(String action) {
    return done.get(action).get();
  }

  /** Every action of {@link #ACTIONS} with how many times it was done so far. */
  Map<String, Integer> counts() {
    Map<String, Integer> counts = new LinkedHashMap<>();
    done.forEach((action, n) -> counts.put(action, n.get()));
    return counts;
  }

  /** The faults it cycles through. */
  List<String> actions() {
    return actions;
  }

  /** Counts {@code action} as done (also for tests). */
  void did(String action) {
    done.get(action).incrementAndGet();
  }

  void stop() {
    stopped = true;
  }

  @Override
  public void run() {
    int round = 0;
    while (!stopped) {
      sleep(interval.toMillis() / 2 + random.nextInt((int) interval.toMillis()));
      if (stopped) {
        return;
      }
      String action = actions.get(round++ % actions.size());
      try {
        boolean acted =
            switch (action) {
              case "kill" -> kill();
              case "pause" -> pause();
              case "stall-consumers" -> stallConsumers();
              case "failover" -> failOver();
              case "freeze-database" -> freezeDatabase();
              case "cut-network" -> cutNetwork();
              case "skew-clocks" -> skewClocks();
              case "kill-during-shutdown" -> killDuringShutdown();
              case "move-tenant" -> moveTenant();
              default -> terminateConnections();
            };
        if (!acted) {
          // No instance can be spared now (one is starting or paused), or no standby is ready.
          terminateConnections();
        }
      } catch (Exception e) {
        history.add("info", "nemesis", action, History.value("error", e.toString()));
      }
    }
  }

  private Instance victim() {
    List<Instance> all = cluster.instances();
    long serving = all.stream().filter(i -> i.alive() && !i.paused && !i.starting).count();
    if (serving < 2) {
      return null; // never take the last serving instance away
    }
    return all.get(random.nextInt(all.size()));
  }

  /**
   * Kills an instance and starts it again in the background (a start can take long on a busy
   * machine; the nemesis goes on meanwhile, sparing the only serving instance).
   */
  private boolean kill() throws Exception {
    Instance victim = victim();
    if (victim == null) {
      return false;
    }
    history.add("invoke", "nemesis", "kill", History.value("instance", victim.name));
    victim.starting = true;
    victim.process.destroyForcibly().waitFor(); // SIGKILL: no shutdown hooks, no graceful close
    did("kill");
    history.add("info", "nemesis", "kill", History.value("instance", victim.name));
    restartLater(victim);
    return true;
  }

  /**
   * Stops an instance as a deployment does ({@code SIGTERM}: the service stops taking requests,
   * finishes those it has and stops its workers), and kills it ({@code kill -9}) while it does, as
   * a supervisor whose grace period ran out would; then starts it again like {@link #kill}.
   */
  private boolean killDuringShutdown() throws Exception {
    Instance victim = victim();
    if (victim == null) {
      return false;
    }
    long millis = 200 + random.nextInt(1300);
    history.add(
        "invoke",
        "nemesis",
        "kill-during-shutdown",
        History.value("instance", victim.name, "millis", millis));
    victim.starting = true;
    victim.signal("TERM");
    sleep(millis);
    boolean stillStopping = victim.process.isAlive();
    victim.process.destroyForcibly().waitFor();
    did("kill-during-shutdown");
    history.add(
        "info",
        "nemesis",
        "kill-during-shutdown",
        History.value("instance", victim.name, "killed-while-stopping", stillStopping));
    restartLater(victim);
    return true;
  }

  /** Starts a killed instance again in a thread of its own, like a supervisor. */
  private void restartLater(Instance victim) {
    Thread restart =
        new Thread(
            () -> {
              try {
                // A start that dies (e.g. its migration's connection was terminated by this
                // nemesis) is tried again.
                for (int attempt = 1; attempt <= 5; attempt++) {
                  sleep(1000);
                  history.add("invoke", RESTARTS, "start", History.value("instance", victim.name));
                  try {
                    cluster.launch(victim);
                    history.add("info", RESTARTS, "start", History.value("instance", victim.name));
                    return;
                  } catch (Exception e) {
                    history.add(
                        "info",
                        RESTARTS,
                        "start",
                        History.value("instance", victim.name, "error", e.toString()));
                    victim.process.destroyForcibly();
                  }
                }
              } finally {
                victim.starting = false;
              }
            },
            "chaos-restart-" + victim.name);
    restarts.add(restart);
    restart.start();
  }

  private boolean pause() throws Exception {
    Instance victim = victim();
    if (victim == null) {
      return false;
    }
    long millis = 3500 + random.nextInt(2500); // past the 3 s lease: the other instance takes over
    history.add(
        "invoke", "nemesis", "pause", History.value("instance", victim.name, "millis", millis));
    victim.paused = true;
    victim.signal("STOP");
    did("pause");
    sleep(millis);
    victim.signal("CONT");
    victim.paused = false;
    history.add(
        "info", "nemesis", "pause", History.value("instance", victim.name, "resumed", true));
    return true;
  }

  /**
   * Fails the payments database over: {@code kill -9} of the primary's server processes, the
   * standby promoted, then, in the background like a restart, the old primary rebuilt as the new
   * standby (a fresh base backup, done once it streams). An asynchronous standby first falls behind
   * for 2–4 s (its WAL receiver stopped), as one does under load or on a slow link, and what it had
   * not received is lost with the primary: what asynchronous replication risks. Not possible while
   * the last failover's standby is being rebuilt, nor after a rebuild failed.
   */
  private boolean failOver() {
    ReplicatedPostgres db = cluster.replicated().orElseThrow();
    if (rebuilding.get() || db.standbys().isEmpty()) {
      return false;
    }
    Node old = db.primary();
    Node standby = db.standbys().get(0);
    Replication replication = db.replication(standby);
    long lagMillis = replication == Replication.ASYNCHRONOUS ? 2000 + random.nextInt(2000) : 0;
    history.add(
        "invoke",
        "nemesis",
        "failover",
        History.value("replication", replication, "lag-millis", lagMillis));
    if (lagMillis > 0) {
      db.stopReceiving(standby);
      sleep(lagMillis);
    }
    db.killPrimary();
    if (lagMillis > 0) {
      db.discardUnreceived(standby);
    }
    db.promote(standby);
    did("failover");
    rebuilding.set(true);
    history.add("info", "nemesis", "failover", History.value("promoted", true));
    Thread rebuild =
        new Thread(
            () -> {
              sleep(interval.toMillis() / 2);
              history.add("invoke", RESTARTS, "rebuild-standby", History.value());
              try {
                db.rebuildAsStandby(old, replication);
                history.add("info", RESTARTS, "rebuild-standby", History.value());
              } catch (RuntimeException e) {
                history.add(
                    "info", RESTARTS, "rebuild-standby", History.value("error", e.toString()));
              } finally {
                rebuilding.set(false);
              }
            },
            "chaos-rebuild-standby");
    restarts.add(rebuild);
    rebuild.start();
    return true;
  }

  /**
   * Does {@code action}: {@code start}, then {@code end} after longer than a client's request (the
   * fault is seen as requests that time out), whatever happens meanwhile.
   */
  private boolean outlastRequests(String action, Runnable start, Runnable end) {
    long millis = requestTimeout.toMillis() + 1000 + random.nextInt(3000);
    history.add("invoke", "nemesis", action, History.value("millis", millis));
    start.run();
    did(action);
    try {
      sleep(millis);
    } finally {
      end.run();
    }
    history.add("info", "nemesis", action, History.value("millis", millis));
    return true;
  }

  /**
   * Freezes the payments database's primary ({@code SIGSTOP} of all its server processes) for
   * longer than a client's request, then lets it go on: connections stay open and nothing answers,
   * the way a hung machine or storage looks. Not while a standby is being rebuilt from it.
   */
  private boolean freezeDatabase() {
    ReplicatedPostgres db = cluster.replicated().orElseThrow();
    if (rebuilding.get()) {
      return false;
    }
    return outlastRequests("freeze-database", db::freezePrimary, db::thawPrimary);
  }

  /**
   * Cuts the network between the instances and the payments database for longer than a client's
   * request: no byte goes either way and nothing is closed; then mends it.
   */
  private boolean cutNetwork() {
    return outlastRequests(
        "cut-network", cluster::cutDatabaseNetwork, cluster::healDatabaseNetwork);
  }

  /**
   * Steps the instances' clocks apart, one 2–6 minutes ahead and the other 2–6 minutes behind, for
   * longer than a lease, then back: leases and expiry follow the database's clock, so nothing may
   * change.
   */
  private boolean skewClocks() throws Exception {
    List<Instance> all = cluster.instances();
    long millis = 8000 + random.nextInt(4000);
    Map<String, Object> offsets = new LinkedHashMap<>();
    for (int i = 0; i < all.size(); i++) {
      Duration offset = Duration.ofSeconds((i % 2 == 0 ? 1 : -1) * (120 + random.nextInt(240)));
      all.get(i).skewClock(offset);
      offsets.put(all.get(i).name, offset.toString());
    }
    offsets.put("millis", millis);
    history.add("invoke", "nemesis", "skew-clocks", offsets);
    did("skew-clocks");
    try {
      sleep(millis);
    } finally {
      for (Instance i : all) {
        i.skewClock(Duration.ZERO);
      }
    }
    history.add("info", "nemesis", "skew-clocks", History.value("millis", millis));
    return true;
  }

  private boolean terminateConnections() throws Exception {
    history.add("invoke", "nemesis", "terminate-connections", History.value());
    int n = 0;
    try (Connection c = cluster.paymentsServer();
        PreparedStatement ps =
            c.prepareStatement(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                    + " where datname = any(?) and pid <> pg_backend_pid()")) {
      ps.setArray(1, c.createArrayOf("text", cluster.paymentsDatabases().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          n++;
        }
      }
    }
    did("terminate-connections");
    history.add("info", "nemesis", "terminate-connections", History.value("backends", n));
    return true;
  }

  /**
   * Holds the inbox table in exclusive mode for a few seconds: every instance's consumers block on
   * their next inbox write, with their transactions open, then go on.
   */
  private boolean stallConsumers() throws Exception {
    long millis = 3000 + random.nextInt(2000);
    history.add("invoke", "nemesis", "stall-consumers", History.value("millis", millis));
    List<Connection> held = new ArrayList<>();
    try {
      for (String database : cluster.paymentsDatabases()) {
        Connection c = cluster.paymentsDatabase(database);
        held.add(c);
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
          s.execute("set local lock_timeout = '2s'");
          s.execute("lock table idemkit_inbox in exclusive mode");
        }
      }
      did("stall-consumers");
      sleep(millis);
    } finally {
      for (Connection c : held) {
        c.rollback();
        c.close();
      }
    }
    history.add("info", "nemesis", "stall-consumers", History.value("millis", millis));
    return true;
  }

  /**
   * Moves one of the run's tenants to the other shard through the service's operator endpoint
   * ({@code POST /v1/admin/tenants/{tenant}/move}), on a serving instance, while the clients go on:
   * the tenant's requests are answered 503 {@code TENANT_MOVING} meanwhile. The endpoint answers
   * where the tenant was; a tenant already on the shard asked for is sent to the other one. A move
   * cut short (its instance killed, its connections terminated) is left to the next one, or to
   * {@link #heal}, which run it again: the move is finished by running it again.
   */
  private boolean moveTenant() throws Exception {
    Instance serving = serving();
    if (serving == null || !cluster.sharded()) {
      return false;
    }
    Move unfinished = unfinishedMove;
    if (unfinished != null) {
      history.add("invoke", "nemesis", "move-tenant", History.value("tenant", unfinished.tenant()));
      return finishMove(serving, unfinished.tenant(), unfinished.shard());
    }
    List<String> tenants = List.copyOf(cluster.tenants().values());
    String tenant = tenants.get(random.nextInt(tenants.size()));
    history.add("invoke", "nemesis", "move-tenant", History.value("tenant", tenant));
    return finishMove(serving, tenant, "b");
  }

  /**
   * Moves {@code tenant} to {@code shard}, or to the other shard when it was there already; counts
   * a move that changed its shard. An unanswered move is remembered for the next try.
   */
  private boolean finishMove(Instance serving, String tenant, String shard) throws Exception {
    unfinishedMove = new Move(tenant, shard);
    JsonNode moved = move(serving, tenant, shard);
    if (moved.path("from").stringValue("").equals(shard)
        && moved.path("shard").stringValue("").equals(shard)) {
      String other = shard.equals("a") ? "b" : "a";
      unfinishedMove = new Move(tenant, other);
      moved = move(serving, tenant, other);
    }
    unfinishedMove = null;
    if (!moved.path("from").stringValue("").equals(moved.path("shard").stringValue(""))) {
      did("move-tenant");
    }
    history.add(
        "info",
        "nemesis",
        "move-tenant",
        History.value(
            "tenant",
            tenant,
            "from",
            moved.path("from").stringValue(""),
            "to",
            moved.path("shard").stringValue("")));
    return true;
  }

  /** One call of the move endpoint; its answer, or an exception when it was not a 200. */
  private JsonNode move(Instance instance, String tenant, String shard) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:" + instance.port + "/v1/admin/tenants/" + tenant + "/move"))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + Cluster.ADMIN_API_KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(Json.write(Map.of("shard", shard))))
            .build();
    HttpResponse<String> answer;
    try {
      answer = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (java.net.http.HttpTimeoutException e) {
      sayWhatWaits();
      throw e;
    }
    if (answer.statusCode() != 200) {
      throw new IllegalStateException(
          "moving " + tenant + " to " + shard + ": " + answer.statusCode() + " " + answer.body());
    }
    return Json.read(answer.body());
  }

  /** What the payments databases' sessions wait for, on standard error: why a move hangs. */
  private void sayWhatWaits() {
    try (Connection c = cluster.paymentsServer();
        PreparedStatement ps =
            c.prepareStatement(
                "select datname, pid, state, wait_event_type, wait_event,"
                    + " pg_blocking_pids(pid)::text, left(query, 160)"
                    + " from pg_stat_activity where datname = any(?) and state <> 'idle'")) {
      ps.setArray(1, c.createArrayOf("text", cluster.paymentsDatabases().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Progress.say(
              "waiting: "
                  + String.join(
                      " | ",
                      rs.getString(1),
                      rs.getString(2),
                      rs.getString(3),
                      rs.getString(4),
                      rs.getString(5),
                      rs.getString(6),
                      rs.getString(7)));
        }
      }
    } catch (Exception e) {
      Progress.say("could not read what waits: " + e);
    }
  }

  /** An instance that serves now, or null. */
  private Instance serving() {
    List<Instance> serving =
        cluster.instances().stream().filter(i -> i.alive() && !i.paused && !i.starting).toList();
    return serving.isEmpty() ? null : serving.get(random.nextInt(serving.size()));
  }

  /**
   * Undoes every fault: resumes paused instances, starts killed ones, finishes a move cut short.
   */
  void heal() throws Exception {
    for (Thread restart : restarts) {
      restart.join();
    }
    for (Instance i : cluster.instances()) {
      if (i.alive() && i.paused) {
        i.signal("CONT");
        i.paused = false;
      }
      if (!i.alive()) {
        cluster.launch(i);
      }
    }
    Move unfinished = unfinishedMove;
    if (unfinished != null) {
      history.add("invoke", "nemesis", "move-tenant", History.value("tenant", unfinished.tenant()));
      finishMove(serving(), unfinished.tenant(), unfinished.shard());
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
