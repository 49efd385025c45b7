package dev.idemkit.kafka.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * Runs a single-node Kafka broker in KRaft mode (one process that is both controller and broker)
 * from the Kafka jars on the class path: no download, no Docker, no ZooKeeper.
 *
 * <pre>
 * java -jar idemkit-kafka-broker.jar [--port 9092] [--controller-port 0] [--dir ~/.idemkit/kafka]
 *                                    [--partitions 4] [--exit-on-stdin-eof]
 * </pre>
 *
 * <p>The first start formats {@code --dir} (a fresh cluster id); later starts find their topics and
 * offsets there. Once the broker answers a metadata request it prints one line, {@code
 * KAFKA_BOOTSTRAP=127.0.0.1:<port> controller=<port> started_ms=<n>}, on standard output; {@link
 * KafkaBroker} waits for that line. A port of 0 picks a free one. Listens on 127.0.0.1 only.
 *
 * <p>{@code --exit-on-stdin-eof} stops the broker when standard input closes, so a broker started
 * by a test JVM never outlives it, even when that JVM is killed.
 */
public final class KafkaBrokerMain {

  /** The line prefix {@link KafkaBroker} waits for. */
  static final String READY_PREFIX = "KAFKA_BOOTSTRAP=";

  private KafkaBrokerMain() {}

  public static void main(String[] args) throws Exception {
    long started = System.nanoTime();
    Map<String, String> options = Options.parse(args);
    int port = freeIfZero(Integer.parseInt(options.getOrDefault("port", "9092")));
    int controllerPort = freeIfZero(Integer.parseInt(options.getOrDefault("controller-port", "0")));
    Path dir =
        Path.of(
            options.getOrDefault(
                "dir", Path.of(System.getProperty("user.home"), ".idemkit", "kafka").toString()));
    int partitions = Integer.parseInt(options.getOrDefault("partitions", "4"));

    Files.createDirectories(dir);
    Path logDir = dir.resolve("data");
    Path config = dir.resolve("server.properties");
    write(config, serverProperties(port, controllerPort, logDir, partitions));
    if (!Files.exists(logDir.resolve("meta.properties"))) {
      format(config);
    }

    if (options.containsKey("exit-on-stdin-eof")) {
      Thread watcher = new Thread(KafkaBrokerMain::exitOnStdinEof, "stdin-eof-watcher");
      watcher.setDaemon(true);
      watcher.start();
    }
    String bootstrap = "127.0.0.1:" + port;
    Thread readiness =
        new Thread(
            () -> {
              awaitReady(bootstrap);
              long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
              System.out.println(
                  READY_PREFIX
                      + bootstrap
                      + " controller="
                      + controllerPort
                      + " dir="
                      + dir
                      + " started_ms="
                      + ms);
              System.out.flush();
            },
            "readiness-probe");
    readiness.setDaemon(true);
    readiness.start();
    // Blocks until the broker shuts down (SIGTERM runs Kafka's own shutdown hook), then exits.
    kafka.Kafka.main(new String[] {config.toString()});
  }

  static String serverProperties(int port, int controllerPort, Path logDir, int partitions) {
    Properties p = new Properties();
    p.setProperty("process.roles", "broker,controller");
    p.setProperty("node.id", "1");
    p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.setProperty(
        "listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    p.setProperty("controller.listener.names", "CONTROLLER");
    p.setProperty("inter.broker.listener.name", "PLAINTEXT");
    p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.setProperty("log.dirs", logDir.toString());
    p.setProperty("num.partitions", Integer.toString(partitions));
    // One node: every internal topic has one replica, and fewer partitions start faster.
    p.setProperty("offsets.topic.replication.factor", "1");
    p.setProperty("offsets.topic.num.partitions", "4");
    p.setProperty("transaction.state.log.replication.factor", "1");
    p.setProperty("transaction.state.log.min.isr", "1");
    p.setProperty("transaction.state.log.num.partitions", "4");
    p.setProperty("share.coordinator.state.topic.replication.factor", "1");
    p.setProperty("share.coordinator.state.topic.min.isr", "1");
    p.setProperty("group.initial.rebalance.delay.ms", "0");
    p.setProperty("auto.create.topics.enable", "true");
    StringBuilder text = new StringBuilder("# Written by KafkaBrokerMain at every start.\n");
    p.stringPropertyNames().stream()
        .sorted()
        .forEach(k -> text.append(k).append('=').append(p.getProperty(k)).append('\n'));
    return text.toString();
  }

  private static void format(Path config) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int rc;
    try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
      rc =
          kafka.tools.StorageTool.execute(
              new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()},
              print);
    }
    if (rc != 0) {
      throw new IllegalStateException(
          "Formatting the log directory failed: " + out.toString(StandardCharsets.UTF_8));
    }
  }

  private static void awaitReady(String bootstrap) {
    Properties p = new Properties();
    p.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
    p.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "4000");
    p.setProperty(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, "50");
    p.setProperty(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "200");
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    try (Admin admin = Admin.create(p)) {
      while (System.nanoTime() < deadline) {
        try {
          if (!admin.describeCluster().nodes().get(4, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (Exception notYet) {
          // The broker is still starting (or catching up on its metadata log): ask again.
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
    System.err.println("The broker did not answer within 3 minutes; stopping");
    System.exit(3);
  }

  private static void exitOnStdinEof() {
    try {
      InputStream in = System.in;
      while (in.read() != -1) {
        // Anything written is ignored; only the end matters.
      }
    } catch (IOException ignored) {
      // A broken pipe means the parent is gone, too.
    }
    System.exit(0);
  }

  private static int freeIfZero(int port) throws IOException {
    if (port != 0) {
      return port;
    }
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static void write(Path file, String text) {
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code --name value} and bare {@code --flag} arguments. */
  static final class Options {
    private Options() {}

    static Map<String, String> parse(String[] args) {
      Map<String, String> options = new java.util.HashMap<>();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (!arg.startsWith("--")) {
          throw new IllegalArgumentException("Unexpected argument: " + arg);
        }
        String name = arg.substring(2);
        int eq = name.indexOf('=');
        if (eq >= 0) {
          options.put(name.substring(0, eq), name.substring(eq + 1));
        } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
          options.put(name, args[++i]);
        } else {
          options.put(name, "true");
        }
      }
      return options;
    }
  }
}
