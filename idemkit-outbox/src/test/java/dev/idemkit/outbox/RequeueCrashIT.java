package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A process killed with {@code kill -9} while it re-queues a parked message, after the handler
 * wrote and before the commit: the message is still parked (operators see it and can re-queue it),
 * nothing of it applied, and the next re-queue applies it once. The transport acknowledged the
 * message when it was parked and never brings it again, so a re-queue that left it anything but
 * parked or applied would lose it.
 */
class RequeueCrashIT {

  private final DataSource ds = TestPostgres.dataSource();

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  @Test
  void aProcessKilledWhileItRequeuesLeavesTheMessageParked() throws Exception {
    EventEnvelope m = appendCommitted(Outbox.create(ds), paymentCompleted("p1", 10)).event();
    AtomicBoolean broken = new AtomicBoolean(true);
    InboxConsumer ledger =
        InboxConsumer.builder("ledger", ds, Fixtures.ledger("ledger", e -> broken.get()))
            .redeliveryHorizon(Duration.ofDays(1))
            .retention(Duration.ofDays(2))
            .maxAttempts(2)
            .build();
    ledger.receive(m);
    assertThat(ledger.receive(m)).isEqualTo(Received.PARKED);

    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                RequeueCrashChild.class.getName(),
                TestPostgres.jdbcUrl(),
                m.eventId().toString())
            .redirectErrorStream(true)
            .start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("APPLYING")) {
        System.out.println("child: " + line);
      }
      assertThat(line)
          .as("the child was applying before hanging")
          .isEqualTo("APPLYING " + m.eventId());
      assertThat(status(m.eventId()))
          .as("what a crash now would leave: still parked")
          .isEqualTo("PARKED");
    } finally {
      child.destroyForcibly(); // SIGKILL
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(status(m.eventId())).isEqualTo("PARKED");
    assertThat(ledger.parked(10))
        .extracting(p -> p.message().eventId())
        .containsExactly(m.eventId());
    assertThat(ledgerRows()).as("nothing of the killed apply").isZero();

    broken.set(false);
    assertThat(ledger.requeue(m.eventId())).isEqualTo(Received.APPLIED);
    assertThat(status(m.eventId())).isEqualTo("PROCESSED");
    assertThat(ledgerRows()).isEqualTo(1);
  }

  private static String status(UUID messageId) throws Exception {
    try (var c = TestPostgres.dataSource().getConnection();
        var s = c.prepareStatement("select status from idemkit_inbox where message_id = ?")) {
      s.setObject(1, messageId);
      try (var rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static long ledgerRows() {
    return TestPostgres.count("select count(*) from test_ledger");
  }
}
