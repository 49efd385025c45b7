package dev.idemkit.chaos;

import dev.idemkit.client.IdempotencyClientException;
import dev.idemkit.client.IdempotentClient;
import dev.idemkit.client.IdempotentResponse;
import dev.idemkit.client.RequestRejectedException;
import dev.idemkit.client.RetryPolicy;
import dev.idemkit.examples.provider.Fault;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The chaos run: two payments-service instances on one database behind a loopback balancer, the
 * provider simulator and one shared mail simulator with faults, the service's event fault
 * injection, retrying clients ({@code idemkit-client}) creating payments and orders, and a {@link
 * Nemesis}; then a drain (recovery, outbox, inboxes, receipt mails), the {@link Accounting} check,
 * the history (JSON lines, and Jepsen EDN with the observed effects as a final read) and a report.
 *
 * <pre>
 * java -jar tools/chaos/target/idemkit-chaos.jar --duration PT10M --clients 8 [--broken-store find-then-insert]
 * </pre>
 */
public final class ChaosRun {

  /** The clients' API key, which the cluster configures as its tenant's (Cluster). */
  static final String API_KEY = "sk_chaos_tenant";

  /** How a run goes. */
  record Config(
      Path serviceJar,
      Path out,
      Duration duration,
      int clients,
      boolean nemesis,
      String brokenStore,
      Duration requestTimeout,
      long seed) {

    static Config defaults(Path serviceJar, Path out) {
      return new Config(
          serviceJar, out, Duration.ofSeconds(60), 8, true, null, Duration.ofSeconds(3), 1);
    }

    Config withDuration(Duration d) {
      return new Config(serviceJar, out, d, clients, nemesis, brokenStore, requestTimeout, seed);
    }

    Config withBrokenStore(String variant, Duration timeout) {
      return new Config(serviceJar, out, duration, clients, nemesis, variant, timeout, seed);
    }

    Config withNemesis(boolean on) {
      return new Config(serviceJar, out, duration, clients, on, brokenStore, requestTimeout, seed);
    }
  }

  /** The outcome: the accounting verdict, what the nemesis did, and where the files are. */
  record Outcome(
      Accounting.Result accounting,
      int kills,
      int pauses,
      int terminations,
      int stalls,
      List<String> undrained,
      Path history,
      Path edn,
      Path report) {
    String resultLine() {
      Accounting.Result a = accounting;
      return String.format(
          Locale.ROOT,
          "RESULT operations=%d ok=%d fail=%d info=%d lost=%d duplicated=%d unexpected=%d recovered=%d"
              + " unresolved=%d receipts=%d ledger=%s kills=%d pauses=%d terminations=%d"
              + " stalls=%d drained=%s valid=%s conclusive=%s",
          a.operations(),
          a.ok(),
          a.fail(),
          a.info(),
          a.lost(),
          a.duplicated(),
          a.unexpected(),
          a.recovered(),
          a.unresolved(),
          a.receipts(),
          a.ledger().violations().isEmpty() ? "conserved" : "violated",
          kills,
          pauses,
          terminations,
          stalls,
          undrained.isEmpty(),
          a.valid(),
          inconclusive(this).isEmpty());
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

  private static final Pattern ID =
      Pattern.compile("\"(?:paymentId|orderId)\"\\s*:\\s*\"([^\"]+)\"");

  private ChaosRun() {}

  /**
   * A bad command line: the only failure that prints the usage. An {@link IllegalArgumentException}
   * from the run itself is a failure of the run, not of its options.
   */
  static final class UsageException extends IllegalArgumentException {
    UsageException(String message) {
      super(message);
    }
  }

  static final String USAGE =
      """
      Usage: java -jar idemkit-chaos.jar [options]   (docs/proof.md)

        --duration D            how long clients run, ISO-8601 (PT60S)
        --clients N             client processes (threads), each retrying its own payments
        --seed N                the nemesis' and clients' random seed
        --nemesis B             true (default) or false: kill -9, pause, cut connections
        --broken-store S        find-then-insert or no-fencing: a deliberately broken build
        --request-timeout D     each client request's timeout, ISO-8601
        --service-jar PATH      (examples/payments-service/target/payments-service.jar)
        --out DIR               history and report files (target/chaos)

      Progress goes to standard error (every 10 s while the clients run); the summary, the
      RESULT line and the files written, to standard output.

      Durations are longer than zero. Exit status: 0 when the accounting holds, 1 when it does
      not, 2 on a usage error, when the run could not start, when no operation was
      acknowledged (every request failed: the run proves nothing), or when the drain after
      the clients did not finish within 60 s (effects on their way were not counted).
      """;

  /**
   * Runs, then exits with the status (also when a start-up failure left threads running: the JVM
   * must end for a script or CI to read the result).
   */
  public static void main(String[] args) {
    int status;
    try {
      status = runMain(args);
    } catch (UsageException usage) {
      System.err.println("chaos: " + usage.getMessage());
      System.err.print(USAGE);
      status = 2;
    } catch (Exception e) {
      System.err.println("chaos: the run could not complete: " + e);
      status = 2;
    }
    System.exit(status);
  }

  static int runMain(String[] args) throws Exception {
    Path jar = Path.of("examples/payments-service/target/payments-service.jar");
    Config config = Config.defaults(jar, Path.of("target", "chaos"));
    for (int i = 0; i < args.length; i += 2) {
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.print(USAGE);
        return 0;
      }
      if (!USAGE.contains("\n  " + args[i] + " ")) {
        throw new UsageException(unknownOption(args[i]));
      }
      if (i + 1 >= args.length) {
        throw new UsageException(args[i] + " needs a value");
      }
      String v = args[i + 1];
      config =
          switch (args[i]) {
            case "--duration" -> config.withDuration(duration(args[i], v));
            case "--clients" ->
                new Config(
                    config.serviceJar(),
                    config.out(),
                    config.duration(),
                    positive(args[i], v),
                    config.nemesis(),
                    config.brokenStore(),
                    config.requestTimeout(),
                    config.seed());
            case "--seed" ->
                new Config(
                    config.serviceJar(),
                    config.out(),
                    config.duration(),
                    config.clients(),
                    config.nemesis(),
                    config.brokenStore(),
                    config.requestTimeout(),
                    number(args[i], v));
            case "--service-jar" ->
                new Config(
                    Path.of(v),
                    config.out(),
                    config.duration(),
                    config.clients(),
                    config.nemesis(),
                    config.brokenStore(),
                    config.requestTimeout(),
                    config.seed());
            case "--out" ->
                new Config(
                    config.serviceJar(),
                    Path.of(v),
                    config.duration(),
                    config.clients(),
                    config.nemesis(),
                    config.brokenStore(),
                    config.requestTimeout(),
                    config.seed());
            case "--nemesis" -> config.withNemesis(bool(args[i], v));
            case "--broken-store" -> {
              if (!v.equals("find-then-insert") && !v.equals("no-fencing")) {
                throw new UsageException(
                    "--broken-store is find-then-insert or no-fencing, not " + v);
              }
              yield config.withBrokenStore(v, config.requestTimeout());
            }
            case "--request-timeout" ->
                config.withBrokenStore(config.brokenStore(), duration(args[i], v));
            default -> throw new UsageException(unknownOption(args[i]));
          };
    }
    if (!Files.isRegularFile(config.serviceJar())) {
      throw new UsageException(
          "no service jar at "
              + config.serviceJar().toAbsolutePath()
              + ": build it (./mvnw -pl examples/payments-service -am package -DskipTests) or"
              + " pass --service-jar");
    }
    Outcome outcome;
    progress(
        "starting PostgreSQL, the provider and the mail simulator (logs under "
            + config.out().resolve("logs")
            + ")");
    try (Cluster cluster = new Cluster(config.serviceJar(), config.out().resolve("logs"), FAULTS)) {
      outcome = run(cluster, config);
    }
    return exitStatus(outcome, System.err);
  }

  /** An unknown option; {@code --duration=PT5M} is told to give its value as the next argument. */
  private static String unknownOption(String flag) {
    int equals = flag.indexOf('=');
    if (flag.startsWith("--")
        && equals > 0
        && USAGE.contains("\n  " + flag.substring(0, equals) + " ")) {
      return "unknown option "
          + flag
          + "; give the value as the next argument: "
          + flag.substring(0, equals)
          + " "
          + flag.substring(equals + 1);
    }
    return "unknown option " + flag;
  }

  /**
   * The exit status of a finished run, with a line on {@code err} when it is not 0: 1 when the
   * accounting found an anomaly (the line counts them); 2, with a line on {@code err} saying why,
   * when the run is not conclusive ({@link #inconclusive}); 0 otherwise.
   */
  static int exitStatus(Outcome o, PrintStream err) {
    Accounting.Result a = o.accounting();
    if (!a.valid()) {
      err.println(
          "chaos: the accounting failed: "
              + a.anomalies().size()
              + (a.anomalies().size() == 1 ? " anomaly" : " anomalies")
              + " (lost "
              + a.lost()
              + ", duplicated "
              + a.duplicated()
              + ", unexpected "
              + a.unexpected()
              + ", unresolved "
              + a.unresolved()
              + ", ledger "
              + (a.ledger().violations().isEmpty() ? "conserved" : "violated")
              + "); the summary shows the first 20, the report under --out all of them"
              + " (exit status 1)");
      return 1;
    }
    Optional<String> inconclusive = inconclusive(o);
    if (inconclusive.isPresent()) {
      err.println(
          "chaos: the run proves nothing: "
              + inconclusive.get()
              + ". Look at the history and the services' logs under --out for why (exit status 2)");
      return 2;
    }
    return 0;
  }

  /**
   * Why the run proves nothing, if it does not: no operation was acknowledged (nothing was lost or
   * duplicated only because nothing was done), or the drain did not finish (the effects counted are
   * not all there will be).
   */
  static Optional<String> inconclusive(Outcome o) {
    Accounting.Result a = o.accounting();
    if (a.ok() == 0) {
      return Optional.of(
          "no operation was acknowledged ("
              + a.operations()
              + " operations: fail "
              + a.fail()
              + ", info "
              + a.info()
              + "); every request failed or timed out, so there was nothing to lose or duplicate");
    }
    if (!o.undrained().isEmpty()) {
      return Optional.of(
          "the drain did not finish within "
              + DRAIN.toSeconds()
              + " s (left: "
              + String.join(", ", o.undrained())
              + "), so effects still on their way (ledger entries, receipts, shipments) were not"
              + " counted");
    }
    return Optional.empty();
  }

  private static Duration duration(String flag, String v) {
    Duration d;
    try {
      d = Duration.parse(v);
    } catch (java.time.format.DateTimeParseException e) {
      throw new UsageException(
          flag + " takes an ISO-8601 duration such as PT45S or PT2M, not '" + v + "'");
    }
    if (d.isNegative() || d.isZero()) {
      throw new UsageException(
          flag + " takes a duration longer than zero, such as PT45S or PT0.5S, not '" + v + "'");
    }
    return d;
  }

  private static long number(String flag, String v) {
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(flag + " takes a whole number, not '" + v + "'");
    }
  }

  private static int positive(String flag, String v) {
    long n = number(flag, v);
    if (n < 1 || n > 1000) {
      throw new UsageException(flag + " takes a number from 1 to 1000, not " + v);
    }
    return (int) n;
  }

  private static boolean bool(String flag, String v) {
    if (!v.equals("true") && !v.equals("false")) {
      throw new UsageException(flag + " is true or false, not '" + v + "'");
    }
    return Boolean.parseBoolean(v);
  }

  /** One run on a cluster whose database and provider may outlive it (instances do not). */
  static Outcome run(Cluster cluster, Config config) throws Exception {
    String tag =
        Long.toString(System.currentTimeMillis(), 36)
            + UUID.randomUUID().toString().substring(0, 4);
    Path out = Files.createDirectories(config.out());
    Path historyFile = out.resolve("history-" + tag + ".jsonl");
    List<String> extra = new ArrayList<>();
    if (config.brokenStore() != null) {
      extra.add("--payments.demo.broken-store=" + config.brokenStore());
    }
    progress(
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
    progress(
        "both instances serving after "
            + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - starting)
            + " s; "
            + config.clients()
            + " clients run for "
            + config.duration()
            + ", nemesis "
            + (config.nemesis() ? "on" : "off"));
    List<IntSupplier> ports = new ArrayList<>();
    for (Cluster.Instance i : cluster.instances()) {
      ports.add(() -> i.port);
    }
    try (Balancer balancer = new Balancer(ports);
        History history = new History(historyFile)) {
      Nemesis nemesis = new Nemesis(cluster, history, Duration.ofSeconds(6), config.seed());
      Thread nemesisThread = new Thread(nemesis, "chaos-nemesis");
      if (config.nemesis()) {
        nemesisThread.start();
      }
      long begun = System.nanoTime();
      long deadline = begun + config.duration().toNanos();
      ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
      ticker.scheduleAtFixedRate(
          () ->
              progress(
                  progressLine(
                      Duration.ofNanos(System.nanoTime() - begun),
                      config.duration(),
                      history.ops(),
                      nemesis)),
          PROGRESS_EVERY.toSeconds(),
          PROGRESS_EVERY.toSeconds(),
          TimeUnit.SECONDS);
      ExecutorService clients = Executors.newFixedThreadPool(config.clients());
      List<Future<?>> running = new ArrayList<>();
      for (int p = 0; p < config.clients(); p++) {
        int process = p;
        running.add(
            clients.submit(
                () -> {
                  work(process, tag, balancer.port(), config, history, deadline);
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
      progress(progressLine(config.duration(), config.duration(), history.ops(), nemesis));
      clients.shutdown();
      nemesis.stop();
      if (config.nemesis()) {
        nemesisThread.join();
      }
      progress(
          "clients done; healing every fault and draining (at most " + DRAIN.toSeconds() + " s)");
      nemesis.heal();
      List<String> undrained = drain(cluster, DRAIN);
      progress(
          (undrained.isEmpty() ? "drained" : "not drained: " + String.join(", ", undrained))
              + "; accounting");
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
              nemesis.kills.get(),
              nemesis.pauses.get(),
              nemesis.terminations.get(),
              nemesis.stalls.get(),
              undrained,
              historyFile,
              edn,
              report);
      Files.writeString(report, json(config, outcome), StandardCharsets.UTF_8);
      System.out.println(text(config, outcome));
      return outcome;
    } finally {
      cluster.stopInstances();
    }
  }

  /** How long the drain after the clients may take before the run counts as inconclusive. */
  static final Duration DRAIN = Duration.ofSeconds(60);

  /** How often a running run says how far it got. */
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

  /** A line on standard error, so that a run of minutes is not silent until its summary. */
  private static void progress(String what) {
    System.err.println("chaos: " + what);
  }

  /**
   * Where the clients are: time run of the duration, the operations answered so far by outcome and
   * those still running, and what the nemesis did.
   */
  static String progressLine(
      Duration elapsed, Duration duration, List<History.Op> ops, Nemesis nemesis) {
    int invoked = 0;
    int ok = 0;
    int fail = 0;
    int info = 0;
    for (History.Op op : ops) {
      if (!(op.process() instanceof Integer)) {
        continue;
      }
      switch (op.type()) {
        case "invoke" -> invoked++;
        case "ok" -> ok++;
        case "fail" -> fail++;
        default -> info++;
      }
    }
    return String.format(
        Locale.ROOT,
        "%d s of %d s: %d operations answered (ok %d, fail %d, info %d), %d running; nemesis: %d"
            + " kill -9, %d SIGSTOP/SIGCONT, %d pg_terminate_backend, %d consumer stalls",
        Math.min(elapsed.toSeconds(), duration.toSeconds()),
        duration.toSeconds(),
        ok + fail + info,
        ok,
        fail,
        info,
        invoked - ok - fail - info,
        nemesis.kills.get(),
        nemesis.pauses.get(),
        nemesis.terminations.get(),
        nemesis.stalls.get());
  }

  /**
   * One client process: creates payments (70 %) and orders (30 %) one after the other, each with
   * its own key reused on every retry, and records what it was told. A client gives an operation 10
   * s: one that outlives a fault is recorded as {@code info} (unknown), and the accounting finds
   * out whether it was applied anyway (recovered).
   */
  private static void work(
      int process, String tag, int port, Config config, History history, long deadline) {
    Random random = new Random(config.seed() * 1000 + process);
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(URI.create("http://127.0.0.1:" + port))
            .bearerToken(API_KEY)
            .httpClient(
                HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(1))
                    .build())
            .requestTimeout(config.requestTimeout())
            .retryPolicy(
                RetryPolicy.builder()
                    .maxAttempts(20)
                    .initialBackoff(Duration.ofMillis(50))
                    .maxBackoff(Duration.ofSeconds(2))
                    .deadline(Duration.ofSeconds(10))
                    .build())
            .build();
    for (int n = 1; System.nanoTime() < deadline; n++) {
      String op = "op-" + tag + "-" + process + "-" + n;
      boolean payment = random.nextInt(10) < 7;
      String f = payment ? "create-payment" : "create-order";
      String amount = (1 + random.nextInt(99)) + ".00";
      String body =
          payment
              ? "{\"accountId\":\"acc_chaos\",\"amount\":\""
                  + amount
                  + "\",\"currency\":\"EUR\",\"merchantReference\":\""
                  + op
                  + "\"}"
              : "{\"currency\":\"EUR\",\"items\":[{\"sku\":\""
                  + op
                  + "\",\"quantity\":1,\"unitPrice\":\""
                  + amount
                  + "\"}]}";
      history.add("invoke", process, f, History.value("op", op, "amount", amount));
      try {
        IdempotentResponse r =
            client.post(payment ? "/v1/payments" : "/v1/orders").json(body).send();
        Matcher id = ID.matcher(r.bodyAsString());
        history.add(
            "ok",
            process,
            f,
            History.value(
                "op",
                op,
                "status",
                r.status(),
                "id",
                id.find() ? id.group(1) : null,
                "attempts",
                r.attempts(),
                "replayed",
                r.replayed()));
      } catch (RequestRejectedException refused) {
        // A refusal of the credentials decided nothing about the operation, and an earlier attempt
        // may have run: its outcome is unknown, not a definite failure.
        int status = refused.status().orElse(0);
        boolean credentials = status == 401 || status == 403 || status == 407;
        history.add(
            credentials && refused.attempts() > 1 ? "info" : "fail",
            process,
            f,
            History.value(
                "op",
                op,
                "status",
                status,
                "error",
                refused.errorCode().orElse(""),
                "attempts",
                refused.attempts()));
      } catch (IdempotencyClientException unknown) {
        history.add(
            "info",
            process,
            f,
            History.value(
                "op",
                op,
                "error",
                unknown.getClass().getSimpleName(),
                "attempts",
                unknown.attempts()));
      } catch (RuntimeException unknown) {
        history.add("info", process, f, History.value("op", op, "error", unknown.toString()));
      }
    }
  }

  /** What must be empty before the accounting, each with its name in the report. */
  private static final List<Map.Entry<String, String>> PENDING =
      List.of(
          Map.entry(
              "records in progress or awaiting recovery",
              "select count(*) from idemkit_record"
                  + " where state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')"),
          Map.entry(
              "outbox events unsent",
              "select count(*) from idemkit_outbox where sent_at is null and parked_at is null"),
          Map.entry(
              "inbox messages failed, to come again",
              "select count(*) from idemkit_inbox where status = 'FAILED'"),
          Map.entry("completed payments not booked", LedgerConservation.UNBOOKED),
          Map.entry(
              "completed payments without a receipt",
              "select count(*) from payment p where p.status = 'COMPLETED'"
                  + " and not exists (select 1 from receipt r where r.payment_id = p.id)"),
          Map.entry(
              "receipt mails pending",
              "select count(*) from idemkit_delivery where status = 'PENDING'"));

  /**
   * Drains the run before the accounting: waits until no record is in progress or awaiting recovery
   * (the recovery workers finish what the faults interrupted; their leases are 3 s), then until the
   * event flow is empty: every outbox event sent, no inbox message waiting to come again, every
   * completed payment booked by the ledger and given a receipt, every receipt mail delivered (or
   * parked). Answers what did not drain within {@code max} (empty: all of it), with counts.
   */
  private static List<String> drain(Cluster cluster, Duration max) throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    List<String> left = new ArrayList<>();
    for (Map.Entry<String, String> pending : PENDING) {
      long n;
      while (true) {
        try (Connection c = cluster.payments()) {
          n = LedgerConservation.count(c, pending.getValue());
        }
        if (n == 0 || System.nanoTime() > deadline) {
          break;
        }
        Thread.sleep(500);
      }
      if (n > 0) {
        left.add(n + " " + pending.getKey());
      }
    }
    return left;
  }

  private static String text(Config config, Outcome o) {
    Accounting.Result a = o.accounting();
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "%nchaos run (%s, %d clients, nemesis %s%s)%n",
            config.duration(),
            config.clients(),
            config.nemesis() ? "on" : "off",
            config.brokenStore() == null
                ? ""
                : ", DELIBERATELY BROKEN store " + config.brokenStore()));
    s.append(
        String.format(
            Locale.ROOT,
            "  operations %d: ok %d, fail %d, info %d%n",
            a.operations(),
            a.ok(),
            a.fail(),
            a.info()));
    s.append(
        String.format(
            Locale.ROOT,
            "  lost %d, duplicated %d, unexpected %d, recovered %d, unresolved %d%n",
            a.lost(),
            a.duplicated(),
            a.unexpected(),
            a.recovered(),
            a.unresolved()));
    s.append(
        String.format(
            Locale.ROOT,
            "  receipts: %d completed payments with one receipt row and one mail delivered%n",
            a.receipts()));
    s.append(
        String.format(
            Locale.ROOT,
            "  nemesis: %d kill -9, %d SIGSTOP/SIGCONT, %d pg_terminate_backend, %d consumer"
                + " stalls%n",
            o.kills(),
            o.pauses(),
            o.terminations(),
            o.stalls()));
    s.append("  faults: ").append(FAULT_SUMMARY).append('\n');
    s.append("  drained: ")
        .append(o.undrained().isEmpty() ? "yes" : "NO, left: " + String.join(", ", o.undrained()))
        .append('\n');
    s.append("  ledger: ").append(a.ledger().summary()).append('\n');
    a.anomalies().stream().limit(20).forEach(x -> s.append("  ! ").append(x).append('\n'));
    inconclusive(o).ifPresent(why -> s.append("  ! INCONCLUSIVE: ").append(why).append('\n'));
    s.append("  history: ")
        .append(o.history())
        .append("\n  history for Jepsen: ")
        .append(o.edn())
        .append("\n  report: ")
        .append(o.report())
        .append('\n');
    s.append(o.resultLine());
    return s.toString();
  }

  private static String json(Config config, Outcome o) {
    Accounting.Result a = o.accounting();
    StringBuilder anomalies = new StringBuilder();
    for (String x : a.anomalies()) {
      anomalies.append(anomalies.length() == 0 ? "" : ",").append(History.quote(x));
    }
    return String.format(
        Locale.ROOT,
        "{\"duration\":%s,\"clients\":%d,\"nemesis\":%s,\"brokenStore\":%s,\"operations\":%d,\"ok\":%d,"
            + "\"fail\":%d,\"info\":%d,\"lost\":%d,\"duplicated\":%d,\"unexpected\":%d,\"recovered\":%d,"
            + "\"unresolved\":%d,\"receipts\":%d,\"kills\":%d,\"pauses\":%d,\"terminations\":%d,"
            + "\"stalls\":%d,\"faults\":%s,\"undrained\":[%s],\"ledger\":%s,\"valid\":%s,"
            + "\"conclusive\":%s,\"anomalies\":[%s]}%n",
        History.quote(config.duration().toString()),
        config.clients(),
        config.nemesis(),
        config.brokenStore() == null ? "null" : History.quote(config.brokenStore()),
        a.operations(),
        a.ok(),
        a.fail(),
        a.info(),
        a.lost(),
        a.duplicated(),
        a.unexpected(),
        a.recovered(),
        a.unresolved(),
        a.receipts(),
        o.kills(),
        o.pauses(),
        o.terminations(),
        o.stalls(),
        History.quote(FAULT_SUMMARY),
        String.join(",", o.undrained().stream().map(History::quote).toList()),
        History.quote(a.ledger().summary()),
        a.valid(),
        inconclusive(o).isEmpty(),
        anomalies);
  }
}
