package dev.idemkit.kafka.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * A real single-node KRaft Kafka broker in a child JVM, for tests: {@link #start()} formats a fresh
 * temporary directory, picks free loopback ports and returns once the broker answers. It can be
 * stopped ({@link #stop()}, a clean shutdown), killed ({@link #kill()}, {@code SIGKILL}) and
 * started again on the same ports and data ({@link #restart()}), which is what clients see when a
 * broker restarts. {@link #close()} kills it and deletes its directory.
 *
 * <p>A child process rather than the broker in the test's own JVM: its threads, memory and shutdown
 * are the broker's own, a kill is a real kill, and it ends with the test JVM (it watches its
 * standard input). {@link #shared()} is one broker for all tests of a JVM.
 */
public final class KafkaBroker implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);
  private static KafkaBroker shared;

  private final Path root;
  private final int partitions;
  private final List<String> jvmOptions;
  private Process process;
  private int port;
  private int controllerPort;
  private Duration lastStart;

  private KafkaBroker(Path root, int partitions, List<String> jvmOptions) {
    this.root = root;
    this.partitions = partitions;
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  /** A new broker in a fresh temporary directory; its auto-created topics have 4 partitions. */
  public static KafkaBroker start() {
    return start(4);
  }

  /**
   * A new broker whose auto-created topics have {@code partitions} partitions. Its JVM runs with C1
   * only ({@code -XX:TieredStopAtLevel=1}): it starts sooner on a busy machine, and tests need no
   * peak throughput.
   */
  public static KafkaBroker start(int partitions) {
    return start(partitions, List.of("-XX:TieredStopAtLevel=1"));
  }

  /**
   * A new broker with these JVM options added (a benchmark passes none, for the full JIT). The heap
   * is 512 MB unless the options say otherwise.
   */
  public static KafkaBroker start(int partitions, List<String> jvmOptions) {
    Path root;
    try {
      root = Files.createTempDirectory("idemkit-kafka-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    KafkaBroker broker = new KafkaBroker(root, partitions, jvmOptions);
    try {
      broker.launch();
    } catch (RuntimeException e) {
      broker.close();
      throw e;
    }
    return broker;
  }

  /**
   * One broker for every test of this JVM, started on first use and killed (its directory deleted)
   * when the JVM ends. Tests that stop or kill a broker start their own instead.
   */
  public static synchronized KafkaBroker shared() {
    if (shared == null) {
      KafkaBroker broker = start();
      Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "kafka-broker-cleanup"));
      shared = broker;
    }
    return shared;
  }

  /** {@code host:port} for {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  /** How long the last start took, from launching the JVM to the broker's first answer. */
  public Duration lastStartTime() {
    return lastStart;
  }

  /** Whether the broker's process is alive. */
  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** A clean shutdown ({@code SIGTERM}: Kafka's controlled shutdown), waiting for the exit. */
  public synchronized void stop() {
    if (process != null) {
      process.destroy();
      awaitExit(Duration.ofSeconds(60));
    }
  }

  /** {@code SIGKILL}: the broker dies with whatever it had not yet flushed. */
  public synchronized void kill() {
    if (process != null) {
      process.destroyForcibly();
      awaitExit(Duration.ofSeconds(30));
    }
  }

  /** Starts the broker again on the same ports and data (after {@link #stop} or {@link #kill}). */
  public synchronized void restart() {
    if (isRunning()) {
      throw new IllegalStateException("The broker is still running; stop or kill it first");
    }
    launch();
  }

  /** Creates a topic (if absent) with {@code partitions} partitions and one replica. */
  public void createTopic(String topic, int partitions) {
    createTopic(topic, partitions, Map.of());
  }

  /**
   * Creates a topic (if absent) with {@code partitions} partitions, one replica and these topic
   * settings ({@code retention.ms}, {@code cleanup.policy}, …); an existing topic keeps its own.
   */
  public void createTopic(String topic, int partitions, Map<String, String> settings) {
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(settings)))
          .all()
          .get(30, SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException("Could not create topic " + topic, e.getCause());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("Could not create topic " + topic + " in 30 s", e);
    }
  }

  /** An admin client on this broker; the caller closes it. */
  public Admin admin() {
    Properties p = new Properties();
    p.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    return Admin.create(p);
  }

  /** The broker's own output (stdout and stderr), for a failing test's message. */
  public String log() {
    try {
      Path log = root.resolve("broker.log");
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(cannot read broker.log: " + e + ")";
    }
  }

  @Override
  public synchronized void close() {
    kill();
    deleteRecursively(root);
  }

  private void launch() {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xms64m");
    command.add("-Xmx512m");
    command.add("-XX:+UseSerialGC");
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(KafkaBrokerMain.class.getName());
    command.addAll(
        List.of(
            "--port",
            Integer.toString(port),
            "--controller-port",
            Integer.toString(controllerPort),
            "--dir",
            root.toString(),
            "--partitions",
            Integer.toString(partitions),
            "--exit-on-stdin-eof"));
    long started = System.nanoTime();
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.PIPE)
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not start the broker's JVM", e);
    }
    CompletableFuture<Map<String, String>> ready = new CompletableFuture<>();
    Thread pump = new Thread(() -> pump(process, ready), "kafka-broker-output");
    pump.setDaemon(true);
    pump.start();
    Map<String, String> line;
    try {
      line = ready.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IllegalStateException(e);
    } catch (ExecutionException | TimeoutException e) {
      process.destroyForcibly();
      throw new IllegalStateException("The broker did not start:\n" + tail(log()), e);
    }
    lastStart = Duration.ofNanos(System.nanoTime() - started);
    port = Integer.parseInt(line.get("port"));
    controllerPort = Integer.parseInt(line.get("controller"));
  }

  /** Copies the broker's output to {@code broker.log} and completes {@code ready} on its line. */
  private void pump(Process p, CompletableFuture<Map<String, String>> ready) {
    try (BufferedReader in =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        var log =
            Files.newBufferedWriter(
                root.resolve("broker.log"),
                StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND)) {
      String text;
      while ((text = in.readLine()) != null) {
        log.write(text);
        log.newLine();
        log.flush();
        if (text.startsWith(KafkaBrokerMain.READY_PREFIX)) {
          ready.complete(parseReady(text));
        }
      }
    } catch (IOException e) {
      // The process ended; the check below reports it.
    }
    ready.completeExceptionally(new IllegalStateException("The broker's process ended"));
  }

  static Map<String, String> parseReady(String line) {
    Map<String, String> fields = new java.util.HashMap<>();
    for (String part : line.split(" ")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        fields.put(part.substring(0, eq), part.substring(eq + 1));
      }
    }
    String bootstrap = fields.get(KafkaBrokerMain.READY_PREFIX.replace("=", ""));
    fields.put("port", bootstrap.substring(bootstrap.lastIndexOf(':') + 1));
    return fields;
  }

  private void awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String tail(String log) {
    String[] lines = log.split("\n");
    return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 40), lines.length));
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("Could not delete " + dir + ": " + e);
    }
  }

  private static final TimeUnit SECONDS = TimeUnit.SECONDS;
}
