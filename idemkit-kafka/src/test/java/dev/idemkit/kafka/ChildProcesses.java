package dev.idemkit.kafka;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.spi.EventTransport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The relay and the consumer as processes of their own, so a test can kill them with {@code kill
 * -9} at a chosen point. Each prints what it did on standard output, line by line.
 */
final class ChildProcesses {

  private ChildProcesses() {}

  /** A running child JVM and the lines it printed. */
  static final class Child implements AutoCloseable {
    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    Child(Class<?> main, String... args) throws IOException {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx256m");
      command.add("-XX:TieredStopAtLevel=1");
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(main.getName());
      command.addAll(List.of(args));
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
      Thread pump =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = in.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException ignored) {
                  // The process is gone.
                }
              });
      pump.setDaemon(true);
      pump.start();
    }

    /** Waits for a line starting with {@code prefix}; answers it. */
    String await(String prefix, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      StringBuilder seen = new StringBuilder();
      while (System.nanoTime() < deadline) {
        String line = lines.poll(100, TimeUnit.MILLISECONDS);
        if (line != null) {
          if (line.startsWith(prefix)) {
            return line;
          }
          seen.append(line).append('\n');
        }
        if (!process.isAlive() && lines.isEmpty()) {
          break;
        }
      }
      throw new AssertionError("No line '" + prefix + "' from the child; it printed:\n" + seen);
    }

    /** {@code kill -9}. */
    void kill() throws InterruptedException {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
      kill();
    }
  }

  static HikariDataSource dataSource(String jdbcUrl, int poolSize) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(poolSize);
    return new HikariDataSource(config);
  }

  /**
   * A relay whose transport, once the broker acknowledged an event, prints {@code ACKED <id>} and
   * never tells the relay: the test kills it there, after the broker has the event and before the
   * relay marked it sent. Arguments: JDBC URL, bootstrap servers.
   */
  static final class StallingRelay {
    public static void main(String[] args) throws Exception {
      HikariDataSource ds = dataSource(args[0], 4);
      EventTransport kafka = KafkaTransport.builder(args[1]).build();
      EventTransport stalling =
          new EventTransport() {
            @Override
            public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
              List<CompletionStage<Void>> acks = kafka.send(events);
              List<CompletionStage<Void>> stalled = new ArrayList<>();
              for (int i = 0; i < events.size(); i++) {
                EventEnvelope e = events.get(i);
                stalled.add(
                    acks.get(i)
                        .thenCompose(
                            ok -> {
                              System.out.println("ACKED " + e.eventId());
                              System.out.flush();
                              return new CompletableFuture<Void>(); // never completes
                            }));
              }
              return stalled;
            }

            @Override
            public Duration redeliveryHorizon() {
              return kafka.redeliveryHorizon();
            }
          };
      OutboxRelay.builder(ds, stalling)
          .ackTimeout(Duration.ofMinutes(10))
          .pollInterval(Duration.ofMillis(20))
          .build()
          .start();
      System.out.println("RELAY STARTED");
      Thread.sleep(Long.MAX_VALUE);
    }
  }

  /**
   * A consumer that applies slowly (so a kill lands in the middle of a batch) and prints {@code
   * APPLIED <aggregate> <sequence>} as each message's handler runs (before its transaction
   * commits). Arguments: JDBC URL, bootstrap servers, consumer name, aggregate type.
   */
  static final class SlowConsumer {
    public static void main(String[] args) throws Exception {
      HikariDataSource ds = dataSource(args[0], 4);
      var ledger = Fixture.ledger(args[2]);
      KafkaEventConsumer.builder(
              args[1],
              args[2],
              ds,
              (tx, m) -> {
                ledger.apply(tx, m);
                System.out.println("APPLIED " + m.aggregateId() + " " + m.sequence());
                System.out.flush();
                Thread.sleep(20);
              })
          .aggregateTypes(args[3])
          .property("session.timeout.ms", "6000")
          .property("heartbeat.interval.ms", "1000")
          .property("max.poll.records", "100")
          .build()
          .start();
      System.out.println("CONSUMER STARTED");
      Thread.sleep(Long.MAX_VALUE);
    }
  }
}
