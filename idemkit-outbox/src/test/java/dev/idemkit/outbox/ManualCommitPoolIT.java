package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.ledger;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The outbox, its relay and an inbox on a pool whose connections come with auto-commit off
 * (Hikari's {@code autoCommit=false}, a common setting): the statements that are meant to commit on
 * their own (a failed attempt counted, a message or event re-queued, old rows deleted) wrote into a
 * transaction that was never committed and rolled back when the connection went back to the pool. A
 * poison message then failed for ever without being parked, and nothing was ever cleaned up.
 */
class ManualCommitPoolIT {

  private final TestClock clock = new TestClock();
  private HikariDataSource manual;

  @BeforeEach
  void setUp() {
    TestPostgres.reset();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(TestPostgres.jdbcUrl());
    config.setUsername("postgres");
    config.setMaximumPoolSize(8);
    config.setAutoCommit(false);
    manual = new HikariDataSource(config);
  }

  @AfterEach
  void tearDown() {
    manual.close();
  }

  @Test
  void aPoisonMessageIsParkedRequeuedAndItsIdForgottenOnAPoolWithoutAutoCommit() throws Exception {
    Outbox outbox = Outbox.create(manual, clock);
    EventEnvelope m = appendCommitted(outbox, paymentCompleted("p1", 5)).event();
    AtomicBoolean broken = new AtomicBoolean(true);
    InboxConsumer inbox =
        InboxConsumer.builder("ledger", manual, ledger("ledger", e -> broken.get()))
            .clock(clock)
            .redeliveryHorizon(Duration.ofDays(1))
            .retention(Duration.ofDays(2))
            .maxAttempts(2)
            .build();

    assertThat(inbox.receive(m)).isEqualTo(Received.FAILED);
    assertThat(inbox.receive(m)).as("the first attempt was counted").isEqualTo(Received.PARKED);
    assertThat(inbox.parkedCount()).isEqualTo(1);
    assertThat(inbox.requeue(m.eventId())).as("still broken").isEqualTo(Received.PARKED);
    assertThat(inbox.parked(10).get(0).attempts())
        .as("the re-queue's attempt counted")
        .isEqualTo(3);

    broken.set(false);
    assertThat(inbox.requeue(m.eventId())).isEqualTo(Received.APPLIED);
    assertThat(TestPostgres.count("select count(*) from test_ledger")).isEqualTo(1);
    clock.advance(Duration.ofDays(3));
    assertThat(inbox.deleteProcessed()).isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_inbox")).isZero();
  }

  @Test
  void aParkedEventIsRequeuedAndSentEventsAreDeletedOnAPoolWithoutAutoCommit() throws Exception {
    Outbox outbox = Outbox.create(manual, clock);
    UUID poison = appendCommitted(outbox, paymentCompleted("p1", 1)).event().eventId();
    RecordingTransport transport = new RecordingTransport(e -> true);
    OutboxRelay relay =
        OutboxRelay.builder(manual, transport)
            .clock(clock)
            .backoff(Duration.ofSeconds(1), Duration.ofSeconds(60))
            .maxAttempts(1)
            .sentRetention(Duration.ofDays(7))
            .build();
    relay.relayOnce();
    assertThat(outbox.backlog().parked()).isEqualTo(1);

    transport.failWhen(e -> false);
    assertThat(outbox.requeue(poison)).isTrue();
    assertThat(outbox.backlog().parked()).as("re-queued for good").isZero();
    relay.relayOnce();
    assertThat(transport.sends.get(poison)).hasValue(2);
    assertThat(outbox.backlog().unsent()).isZero();

    clock.advance(Duration.ofDays(8));
    assertThat(relay.deleteSentEvents()).isEqualTo(1);
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isZero();
  }
}
