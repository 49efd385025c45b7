package dev.idemkit.spring.boot;

import static dev.idemkit.spring.boot.TenantShardsIT.createShardDatabases;
import static dev.idemkit.spring.boot.TenantShardsIT.dropDatabases;
import static dev.idemkit.spring.boot.TenantShardsIT.on;
import static dev.idemkit.spring.boot.TenantShardsIT.plain;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.spi.EventTransport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter's Kafka consumers with tenants on two shards (two databases on the machine's
 * PostgreSQL, a real broker): one consumer group applies each message on its tenant's shard, its
 * inbox row, sequence row and the handler's row there in one transaction, with that shard bound to
 * the handler's thread. A tenant moves to the other shard and back while its events and another
 * tenant's flow: every event is applied exactly once, each aggregate's in sequence, and the moving
 * tenant's rows end on its last shard only, its aggregates' sequences going on there. A tenant's
 * aggregate whose sent events the outbox already deleted goes on numbering after a move.
 */
@SpringBootTest(
    classes = ShardedKafkaConsumersIT.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.NONE,
    properties = {"idemkit.shards-directory-refresh=50ms"})
class ShardedKafkaConsumersIT {

  private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  private static final String DB_A = "idemkit_kafka_shard_a_" + SUFFIX;
  private static final String DB_B = "idemkit_kafka_shard_b_" + SUFFIX;
  private static final Map<String, String> DATABASES = Map.of("a", DB_A, "b", DB_B);

  /** This run's aggregate type (and so its topic) on the broker the JVM's tests share. */
  static final String TYPE = "account" + SUFFIX;

  /** Each applied message, as the handler wrote it in the inbox's transaction. */
  private static final String APPLIED =
      """
      create table kafka_applied (
          event_id     uuid   not null,
          tenant       text   not null,
          aggregate_id text   not null,
          sequence     bigint not null,
          bound        text   not null
      )""";

  /** What the handler found out of order: an aggregate's message not right after its last. */
  static final List<String> OUT_OF_ORDER = new CopyOnWriteArrayList<>();

  @Autowired TenantShards shards;
  @Autowired TenantDirectory directory;
  @Autowired EventTransport transport;
  @Autowired KafkaEventConsumer consumer;

  @DynamicPropertySource
  static void shards(DynamicPropertyRegistry registry) throws SQLException {
    createShardDatabases(DB_A, DB_B);
    for (String db : DATABASES.values()) {
      on(db).execute(APPLIED);
    }
    DATABASES.forEach(
        (shard, db) -> {
          registry.add("idemkit.shards." + shard + ".url", () -> TenantShardsIT.SERVER + db);
          registry.add("idemkit.shards." + shard + ".username", () -> "postgres");
        });
    registry.add(
        "idemkit.events.kafka.bootstrap-servers", () -> KafkaBroker.shared().bootstrapServers());
  }

  @AfterAll
  static void dropShards() throws SQLException {
    dropDatabases(DB_A, DB_B);
  }

  @Configuration
  @EnableAutoConfiguration
  static class App {
    /** The application's consumer, started through the starter (docs/events.md). */
    @Bean
    KafkaEventConsumer accounts(KafkaConsumers kafka, TenantShards shards) {
      return kafka.start(
          "accounts-" + SUFFIX,
          (tx, m) -> {
            long last;
            try (PreparedStatement s =
                tx.prepareStatement(
                    "select coalesce(max(sequence), 0) from kafka_applied where aggregate_id = ?")) {
              s.setString(1, m.aggregateId());
              try (ResultSet rs = s.executeQuery()) {
                rs.next();
                last = rs.getLong(1);
              }
            }
            if (last != m.sequence() - 1) {
              OUT_OF_ORDER.add(m.aggregateId() + " " + m.sequence() + " after " + last);
            }
            try (PreparedStatement s =
                tx.prepareStatement(
                    "insert into kafka_applied (event_id, tenant, aggregate_id, sequence, bound)"
                        + " values (?, ?, ?, ?, ?)")) {
              s.setObject(1, m.eventId());
              s.setString(2, m.tenant());
              s.setString(3, m.aggregateId());
              s.setLong(4, m.sequence());
              s.setString(5, String.valueOf(shards.current()));
              s.executeUpdate();
            }
          },
          TYPE);
    }
  }

  /** The application's table moves with the tenant. */
  private TenantMove move() {
    return new TenantMove(
        shards, directory, List.of(new TenantMove.Table("kafka_applied", "tenant")));
  }

  private String placed(String name, String shard) throws SQLException {
    String tenant = name + "-" + UUID.randomUUID().toString().substring(0, 6);
    move().move(tenant, shard);
    return tenant;
  }

  /** The next events' sequences, by aggregate. */
  private final Map<String, Long> sequences = new ConcurrentHashMap<>();

  /** Sends one event of each aggregate; answers them. */
  private List<EventEnvelope> send(String tenant, List<String> aggregates) {
    List<EventEnvelope> events = new ArrayList<>();
    for (String aggregate : aggregates) {
      events.add(
          new EventEnvelope(
              UUID.randomUUID(),
              "credited",
              tenant,
              TYPE,
              aggregate,
              sequences.merge(aggregate, 1L, Long::sum),
              Instant.now(),
              "{}"));
    }
    return send(events);
  }

  /** Sends {@code events} and waits for the broker's acknowledgement. */
  private List<EventEnvelope> send(List<EventEnvelope> events) {
    CompletableFuture.allOf(
            transport.send(events).stream()
                .map(stage -> stage.toCompletableFuture())
                .toArray(CompletableFuture[]::new))
        .join();
    return events;
  }

  private static long count(String db, String sql, Object... args) {
    return on(db).queryForObject(sql, Long.class, args);
  }

  private static void awaitApplied(String tenant, int expected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String sql = "select count(*) from kafka_applied where tenant = ?";
    while (count(DB_A, sql, tenant) + count(DB_B, sql, tenant) < expected
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  @Test
  void eachMessageIsAppliedOnItsTenantsShardWithThatShardBound() throws Exception {
    String onA = placed("on-a", "a");
    String onB = placed("on-b", "b");
    for (int i = 0; i < 5; i++) {
      send(onA, List.of(onA + "-1", onA + "-2"));
      send(onB, List.of(onB + "-1", onB + "-2"));
    }
    awaitApplied(onA, 10);
    awaitApplied(onB, 10);

    String applied = "select count(*) from kafka_applied where tenant = ? and bound = ?";
    assertThat(count(DB_A, applied, onA, "a")).isEqualTo(10);
    assertThat(count(DB_B, applied, onB, "b")).isEqualTo(10);
    String any = "select count(*) from kafka_applied where tenant = ?";
    assertThat(count(DB_B, any, onA)).isZero();
    assertThat(count(DB_A, any, onB)).isZero();
    // The inbox rows and the sequence rows, named after the tenant, are on its shard too.
    String inbox = "select count(*) from idemkit_inbox where tenant = ? and status = 'PROCESSED'";
    assertThat(count(DB_A, inbox, onA)).isEqualTo(10);
    assertThat(count(DB_B, inbox, onA)).isZero();
    String sequence =
        "select count(*) from idemkit_inbox_sequence where tenant = ? and last_sequence = 5";
    assertThat(count(DB_B, sequence, onB)).isEqualTo(2);
    assertThat(count(DB_A, sequence, onB)).isZero();
    assertThat(OUT_OF_ORDER).isEmpty();
    assertThat(consumer.heldSummary().count()).isZero();
  }

  @Test
  void aTenantMovesAndBackWhileItsEventsFlowAndEachIsAppliedOnceInSequence() throws Exception {
    String moving = placed("moving", "a");
    String staying = placed("staying", "a");
    List<String> movingAggregates = List.of(moving + "-1", moving + "-2", moving + "-3");
    List<String> stayingAggregates = List.of(staying + "-1", staying + "-2");
    List<EventEnvelope> sentMoving = new CopyOnWriteArrayList<>();
    List<EventEnvelope> sentStaying = new CopyOnWriteArrayList<>();
    AtomicBoolean sending = new AtomicBoolean(true);
    Thread producer =
        new Thread(
            () -> {
              while (sending.get()) {
                sentMoving.addAll(send(moving, movingAggregates));
                sentStaying.addAll(send(staying, stayingAggregates));
                try {
                  Thread.sleep(10);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    producer.start();
    try {
      Thread.sleep(1_000);
      move().move(moving, "b");
      Thread.sleep(1_000);
      move().move(moving, "a");
      Thread.sleep(500);
      move().move(moving, "b");
      Thread.sleep(500);
    } finally {
      sending.set(false);
      producer.join();
    }
    awaitApplied(moving, sentMoving.size());
    awaitApplied(staying, sentStaying.size());

    // Every event applied exactly once, and the moving tenant's only on its last shard.
    String all = "select count(*) from kafka_applied where tenant = ?";
    String distinct = "select count(distinct event_id) from kafka_applied where tenant = ?";
    assertThat(count(DB_B, all, moving)).isEqualTo(sentMoving.size());
    assertThat(count(DB_B, distinct, moving)).isEqualTo(sentMoving.size());
    assertThat(count(DB_A, all, moving)).isZero();
    assertThat(count(DB_A, all, staying)).isEqualTo(sentStaying.size());
    assertThat(count(DB_A, distinct, staying)).isEqualTo(sentStaying.size());
    assertThat(count(DB_B, all, staying)).isZero();
    assertThat(OUT_OF_ORDER).isEmpty();
    // Its aggregates' sequences went with it: each aggregate's last, on the last shard only.
    for (String aggregate : movingAggregates) {
      assertThat(
              count(
                  DB_B,
                  "select last_sequence from idemkit_inbox_sequence"
                      + " where aggregate_id = ? and tenant = ?",
                  aggregate,
                  moving))
          .isEqualTo(sequences.get(aggregate));
      assertThat(
              count(
                  DB_A,
                  "select count(*) from idemkit_inbox_sequence where aggregate_id = ?",
                  aggregate))
          .isZero();
    }

    // Every event delivered again (a consumer that crashed before its offsets were committed, a
    // reset group) is known on the tenant's new shard, then the aggregates go on there: one more
    // event each, applied after the last (and after the redelivered ones on its partition).
    send(sentMoving);
    List<EventEnvelope> more = send(moving, movingAggregates);
    awaitApplied(moving, sentMoving.size() + more.size());
    assertThat(count(DB_B, all, moving)).isEqualTo(sentMoving.size() + more.size());
    assertThat(count(DB_B, distinct, moving)).isEqualTo(sentMoving.size() + more.size());
    assertThat(OUT_OF_ORDER).isEmpty();
    assertThat(consumer.heldSummary().count()).isZero();
  }

  @Test
  void anAggregateWhoseSentEventsWereDeletedGoesOnNumberingAfterAMove() throws Exception {
    String tenant = placed("numbered", "a");
    String aggregate = tenant + "-order";
    appendOn(DB_A, tenant, aggregate);
    appendOn(DB_A, tenant, aggregate);
    appendOn(DB_A, tenant, aggregate);
    // The sent-event retention deleted the events that linked the aggregate to its tenant.
    on(DB_A).update("delete from idemkit_outbox where tenant = ?", tenant);

    move().move(tenant, "b");

    assertThat(appendOn(DB_B, tenant, aggregate)).isEqualTo(4);
    assertThat(
            count(
                DB_A,
                "select count(*) from idemkit_outbox_aggregate where aggregate_id = ?",
                aggregate))
        .isZero();
  }

  /** Appends an event on the database {@code db} itself; answers its sequence. */
  private static long appendOn(String db, String tenant, String aggregate) throws SQLException {
    try (Connection c = plain(db).getConnection()) {
      c.setAutoCommit(false);
      Outbox.Appended appended =
          Outbox.create(plain(db))
              .append(
                  c,
                  new NewEvent(
                      "placed", tenant, "order", aggregate, UUID.randomUUID().toString(), "{}"));
      c.commit();
      return appended.event().sequence();
    }
  }
}
