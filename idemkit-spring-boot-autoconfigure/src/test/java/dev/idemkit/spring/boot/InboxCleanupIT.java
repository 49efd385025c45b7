package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.SequenceStart;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The starter's inbox cleanup on PostgreSQL, left to itself: with a retention of an hour and a run
 * every 200 ms, the ids processed two hours ago disappear, those of an {@link InboxConsumer} bean
 * and those of a consumer an {@link Inboxes} bean lists, while recent ids and failed, parked and
 * held messages stay; a consumer in sequence from the first message seen also loses its idle
 * aggregates' sequence rows, and keeps those of aggregates with a message waiting.
 */
class InboxCleanupIT {

  @TempDir static Path dataDir;

  private static IdemkitDatabase database;
  private static DataSource dataSource;
  private static JdbcTemplate jdbc;

  private static final Duration RETENTION = Duration.ofHours(1);
  private static final Duration HORIZON = Duration.ofMinutes(30);

  /** Fails on the aggregates named poison-…; applies the others (their inbox rows say so). */
  private static final MessageHandler HANDLER =
      (tx, m) -> {
        if (m.aggregateId().startsWith("poison")) {
          throw new IllegalStateException("poison " + m.aggregateId());
        }
      };

  @BeforeAll
  static void startDatabase() {
    database = IdemkitDatabase.embedded(dataDir, 6);
    dataSource = database.dataSource();
    OutboxSchema.migrate(dataSource);
    jdbc = new JdbcTemplate(dataSource);
  }

  @AfterAll
  static void stopDatabase() {
    database.close();
  }

  private static InboxConsumer ledger(Clock clock) {
    return InboxConsumer.builder("ledger", dataSource, HANDLER)
        .inSequence(SequenceStart.FIRST_SEEN)
        .maxAttempts(2)
        .retention(RETENTION)
        .redeliveryHorizon(HORIZON)
        .clock(clock)
        .build();
  }

  private static InboxConsumer shipping(Clock clock) {
    return InboxConsumer.builder("shipping", dataSource, HANDLER)
        .retention(RETENTION)
        .redeliveryHorizon(HORIZON)
        .clock(clock)
        .build();
  }

  /**
   * The test's messages by id, as "aggregate/sequence" (an inbox keeps no envelope once applied).
   */
  private static final Map<UUID, String> NAMES = new ConcurrentHashMap<>();

  private static EventEnvelope event(String aggregateId, long sequence) {
    UUID id = UUID.randomUUID();
    NAMES.put(id, aggregateId + "/" + sequence);
    return new EventEnvelope(
        id, "PaymentCompleted", "tenant-a", "payment", aggregateId, sequence, Instant.now(), "{}");
  }

  /** {@code consumer}'s inbox rows, as "aggregate/sequence STATUS", sorted. */
  private static List<String> inboxRows(String consumer) {
    return jdbc
        .query(
            "select message_id, status from idemkit_inbox where consumer_name = ?",
            (rs, n) -> NAMES.get(rs.getObject(1, UUID.class)) + " " + rs.getString(2),
            consumer)
        .stream()
        .sorted()
        .toList();
  }

  private static List<String> sequenceRows() {
    return jdbc.queryForList(
        "select aggregate_id from idemkit_inbox_sequence where consumer_name = 'ledger'"
            + " order by 1",
        String.class);
  }

  @Test
  void oldProcessedIdsDisappearByThemselvesAndEverythingElseStays() throws Exception {
    Clock twoHoursAgo = Clock.fixed(Instant.now().minus(Duration.ofHours(2)), ZoneOffset.UTC);
    InboxConsumer ledgerThen = ledger(twoHoursAgo);
    InboxConsumer shippingThen = shipping(twoHoursAgo);
    InboxConsumer ledger = ledger(Clock.systemUTC());
    InboxConsumer shipping = shipping(Clock.systemUTC());

    // Two hours ago: processed ids, a held message (its sequence 2 missing), a failed one, a
    // parked one.
    assertThat(ledgerThen.receive(List.of(event("old-1", 1), event("old-2", 1))))
        .containsOnly(Received.APPLIED);
    assertThat(ledgerThen.receive(List.of(event("gap", 1), event("gap", 3))))
        .containsExactly(Received.APPLIED, Received.HELD);
    assertThat(ledgerThen.receive(event("poison-failed", 1))).isEqualTo(Received.FAILED);
    EventEnvelope parked = event("poison-parked", 1);
    assertThat(ledgerThen.receive(parked)).isEqualTo(Received.FAILED);
    assertThat(ledgerThen.receive(parked)).isEqualTo(Received.PARKED);
    assertThat(shippingThen.receive(event("old-3", 1))).isEqualTo(Received.APPLIED);
    // Now: one recent id each.
    assertThat(ledger.receive(event("recent-1", 1))).isEqualTo(Received.APPLIED);
    assertThat(shipping.receive(event("recent-2", 1))).isEqualTo(Received.APPLIED);

    List<String> ledgerBefore =
        List.of(
            "gap/1 PROCESSED",
            "gap/3 HELD",
            "old-1/1 PROCESSED",
            "old-2/1 PROCESSED",
            "poison-failed/1 FAILED",
            "poison-parked/1 PARKED",
            "recent-1/1 PROCESSED");
    assertThat(inboxRows("ledger")).containsExactlyElementsOf(ledgerBefore);
    List<String> sequencesBefore = sequenceRows();
    assertThat(sequencesBefore).contains("old-1", "old-2", "gap", "recent-1");

    ApplicationContextRunner runner =
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdemkitInboxAutoConfiguration.class))
            .withPropertyValues("idemkit.inbox.cleanup.interval=PT0.2S")
            .withBean("ledgerInbox", InboxConsumer.class, () -> ledger)
            // The shipping consumer is no bean: a registry lists it, and the ledger again.
            .withBean(Inboxes.class, () -> () -> List.of(shipping, ledger));

    // Turned off, nothing goes.
    runner
        .withPropertyValues("idemkit.inbox.cleanup.enabled=false")
        .run(context -> Thread.sleep(1_000));
    assertThat(inboxRows("ledger")).containsExactlyElementsOf(ledgerBefore);
    assertThat(inboxRows("shipping")).containsExactly("old-3/1 PROCESSED", "recent-2/1 PROCESSED");
    assertThat(sequenceRows()).isEqualTo(sequencesBefore);

    runner.run(
        context -> {
          long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
          while ((inboxRows("ledger").size() > 4 || inboxRows("shipping").size() > 1)
              && System.nanoTime() < deadline) {
            Thread.sleep(100);
          }
          Thread.sleep(1_000); // a few runs more: what stays, stays
          assertThat(inboxRows("ledger"))
              .containsExactly(
                  "gap/3 HELD",
                  "poison-failed/1 FAILED",
                  "poison-parked/1 PARKED",
                  "recent-1/1 PROCESSED");
          assertThat(inboxRows("shipping")).containsExactly("recent-2/1 PROCESSED");
          assertThat(sequenceRows())
              .as("the idle aggregates are forgotten; those with a message waiting are kept")
              .containsExactlyElementsOf(
                  sequencesBefore.stream().filter(a -> !a.startsWith("old-")).toList());
        });
  }
}
