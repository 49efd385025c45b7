package dev.idemkit.kafka;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.OutboxSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * What the Kafka integration tests share: one embedded PostgreSQL and one broker per test JVM, a
 * ledger-like handler that records every application (so a double application shows as two rows),
 * and helpers. Each test uses aggregate types (so topics) and consumer names of its own.
 */
final class Fixture {

  private static IdemkitDatabase db;

  private Fixture() {}

  static synchronized IdemkitDatabase db() {
    if (db == null) {
      Path dir;
      try {
        dir = Files.createTempDirectory("idemkit-kafka-it-pg");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      db = IdemkitDatabase.embedded(dir, 40);
      IdemkitDatabase started = db;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    started.close();
                    deleteRecursively(dir);
                    if (Files.exists(dir)) { // the server may still have been writing its WAL
                      try {
                        Thread.sleep(1000);
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                      deleteRecursively(dir);
                    }
                  },
                  "kafka-it-pg-cleanup"));
      OutboxSchema.migrate(db.dataSource());
      KafkaSchema.migrate(db.dataSource());
      execute(
          """
          create table if not exists kafka_it_ledger (
              applied_order  bigserial primary key,
              consumer_name  text   not null,
              aggregate_type text   not null,
              aggregate_id   text   not null,
              sequence       bigint not null,
              event_id       uuid   not null
          )
          """);
    }
    return db;
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("Could not delete " + dir + ": " + e);
    }
  }

  static DataSource ds() {
    return db().dataSource();
  }

  /** The database's URL with the login in it (the embedded server takes a password). */
  static String jdbcUrl() {
    HikariDataSource pool = (HikariDataSource) ds();
    String url = pool.getJdbcUrl();
    return url
        + (url.contains("?") ? "&" : "?")
        + "user="
        + pool.getUsername()
        + "&password="
        + pool.getPassword();
  }

  static KafkaBroker broker() {
    return KafkaBroker.shared();
  }

  /** A unique name for this test's aggregate type, topic and consumer. */
  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Records the application of each message, in the inbox's transaction. */
  static MessageHandler ledger(String consumer) {
    return (Connection tx, EventEnvelope m) -> {
      try (PreparedStatement s =
          tx.prepareStatement(
              "insert into kafka_it_ledger (consumer_name, aggregate_type, aggregate_id, sequence,"
                  + " event_id) values (?, ?, ?, ?, ?)")) {
        s.setString(1, consumer);
        s.setString(2, m.aggregateType());
        s.setString(3, m.aggregateId());
        s.setLong(4, m.sequence());
        s.setObject(5, m.eventId());
        s.executeUpdate();
      }
    };
  }

  /** Appends one event per (aggregate, cause) in one transaction; answers the envelopes. */
  static List<EventEnvelope> append(String aggregateType, List<String> aggregateIds, String cause)
      throws Exception {
    Outbox outbox = Outbox.create(ds());
    List<EventEnvelope> out = new ArrayList<>();
    try (Connection c = ds().getConnection()) {
      c.setAutoCommit(false);
      for (String id : aggregateIds) {
        out.add(
            outbox
                .append(
                    c,
                    new NewEvent(
                        "ThingHappened",
                        "tenant_it",
                        aggregateType,
                        id,
                        id + "/" + cause,
                        "{\"aggregate\":\"" + id + "\",\"cause\":\"" + cause + "\"}"))
                .event());
      }
      c.commit();
    }
    return out;
  }

  static OutboxRelay.Builder relay(KafkaTransport transport) {
    return OutboxRelay.builder(ds(), transport)
        .pollInterval(Duration.ofMillis(20))
        .backoff(Duration.ofMillis(200), Duration.ofSeconds(2))
        .ackTimeout(Duration.ofSeconds(30));
  }

  static KafkaTransport transport(String bootstrap) {
    return KafkaTransport.builder(bootstrap).build();
  }

  static KafkaEventConsumer.Builder consumer(String bootstrap, String name, String aggregateType) {
    return KafkaEventConsumer.builder(bootstrap, name, ds(), ledger(name))
        .aggregateTypes(aggregateType)
        .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(500))
        .heldRetryInterval(Duration.ofMillis(200))
        .pollTimeout(Duration.ofMillis(100))
        .property("session.timeout.ms", "6000")
        .property("heartbeat.interval.ms", "1000");
  }

  /** Rows in the ledger per event id, for one consumer. */
  static Map<UUID, Integer> applications(String consumer) {
    Map<UUID, Integer> counts = new HashMap<>();
    query(
        "select event_id, count(*) from kafka_it_ledger where consumer_name = '"
            + consumer
            + "' group by event_id",
        rs -> counts.put(rs.getObject(1, UUID.class), rs.getInt(2)));
    return counts;
  }

  /** Each aggregate's applied sequences, in the order they were applied. */
  static Map<String, List<Long>> appliedOrder(String consumer) {
    Map<String, List<Long>> order = new HashMap<>();
    query(
        "select aggregate_id, sequence from kafka_it_ledger where consumer_name = '"
            + consumer
            + "' order by applied_order",
        rs -> order.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getLong(2)));
    return order;
  }

  static long count(String sql) {
    long[] n = new long[1];
    query(sql, rs -> n[0] = rs.getLong(1));
    return n[0];
  }

  interface Row {
    void read(ResultSet rs) throws Exception;
  }

  static void query(String sql, Row row) {
    try (Connection c = ds().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        row.read(rs);
      }
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  static void execute(String sql) {
    try (Connection c = ds().getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** Waits (polling, bounded) until {@code done}; fails with {@code what} otherwise. */
  static void await(Duration timeout, String what, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Timed out after " + timeout + " waiting for: " + what);
      }
      Thread.sleep(50);
    }
  }
}
