package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.SequenceStart;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * A database the first Kafka consumer wrote (its own sequence and held tables) upgraded: what it
 * recorded moves into the inbox, and a consumer reading the inbox carries on from there.
 */
class KafkaSchemaUpgradeIT {

  @Test
  void sequencesAndHeldMessagesMoveIntoTheInbox() throws Exception {
    String db = "kafka_upgrade_" + UUID.randomUUID().toString().substring(0, 8);
    Fixture.execute("create database " + db);
    try (HikariDataSource ds = new HikariDataSource()) {
      ds.setJdbcUrl(Fixture.jdbcUrl().replace("/postgres?", "/" + db + "?"));
      ds.setMaximumPoolSize(4);
      // As it stood before: the outbox's first version and the Kafka module's first.
      Flyway.configure()
          .dataSource(ds)
          .locations(OutboxSchema.LOCATION)
          .table(OutboxSchema.HISTORY_TABLE)
          .target("1")
          .baselineOnMigrate(true)
          .baselineVersion("0")
          .load()
          .migrate();
      Flyway.configure()
          .dataSource(ds)
          .locations(KafkaSchema.LOCATION)
          .table(KafkaSchema.HISTORY_TABLE)
          .target("1")
          .baselineOnMigrate(true)
          .baselineVersion("0")
          .load()
          .migrate();
      UUID held = UUID.randomUUID();
      try (Connection c = ds.getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            "insert into idemkit_kafka_sequence values ('ledger', 'account', 'a1', 1, now())");
        s.execute(
            "insert into idemkit_kafka_held values ('ledger', '"
                + held
                + "', 'Booked', 't', 'account', 'a1', 3, now(), '{}', 'idemkit.events.account',"
                + " 0, 42, now())");
      }

      KafkaSchema.migrate(ds);

      InboxConsumer inbox =
          InboxConsumer.builder("ledger", ds, (tx, m) -> {})
              .redeliveryHorizon(Duration.ofDays(7))
              .inSequence(SequenceStart.FROM_ONE)
              .build();
      assertThat(inbox.held(10))
          .singleElement()
          .satisfies(
              h -> {
                assertThat(h.message().eventId()).isEqualTo(held);
                assertThat(h.lastApplied()).isEqualTo(1);
              });
      try (Connection c = ds.getConnection();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "select count(*) from information_schema.tables"
                      + " where table_name like 'idemkit_kafka_%' and table_name not like '%history'")) {
        rs.next();
        assertThat(rs.getLong(1)).as("the Kafka module's own tables are gone").isZero();
      }
      // Sequence 2 closes the gap: the held 3 follows.
      assertThat(
              inbox.receive(
                  new dev.idemkit.outbox.EventEnvelope(
                      UUID.randomUUID(),
                      "Booked",
                      "t",
                      "account",
                      "a1",
                      2,
                      java.time.Instant.now(),
                      "{}")))
          .isEqualTo(Received.APPLIED);
      assertThat(inbox.releaseHeld()).isEqualTo(1);
      assertThat(inbox.heldSummary().count()).isZero();
    } finally {
      Fixture.execute("drop database if exists " + db + " with (force)");
    }
  }
}
