package dev.idemkit.outbox;

import static dev.idemkit.outbox.Fixtures.appendCommitted;
import static dev.idemkit.outbox.Fixtures.paymentCompleted;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A relay process killed with {@code kill -9} after its transport delivered (and the consumer
 * committed its effect) and before the relay marked the events sent: the next relay delivers them
 * again, and the consumer skips them. Delivered twice, applied once, nothing left unsent.
 */
class RelayKillIT {

  private final DataSource ds = TestPostgres.dataSource();

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  @Test
  void aRelayKilledBetweenSendingAndMarkingDeliversTwiceAndTheConsumerAppliesOnce()
      throws Exception {
    Outbox outbox = Outbox.create(ds);
    for (int i = 0; i < 5; i++) {
      appendCommitted(outbox, paymentCompleted("p" + i, 10));
    }

    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                RelayCrashChild.class.getName(),
                TestPostgres.jdbcUrl())
            .redirectErrorStream(true)
            .start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("DELIVERED")) {
        System.out.println("child: " + line);
      }
      assertThat(line).as("the child delivered before hanging").isEqualTo("DELIVERED 5");
      child.destroyForcibly(); // SIGKILL
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(received()).isEqualTo(5);
    assertThat(ledgerRows()).isEqualTo(5);
    assertThat(unsent()).as("the killed relay marked nothing").isEqualTo(5);

    InboxConsumer ledger =
        InboxConsumer.builder("ledger", ds, Fixtures.ledger("ledger", e -> false))
            .redeliveryHorizon(Duration.ofDays(1))
            .retention(Duration.ofDays(2))
            .build();
    OutboxRelay relay =
        OutboxRelay.builder(
                ds,
                EmbeddedTransport.create(Duration.ofDays(1))
                    .subscribe(Fixtures.counting(ledger, ds)))
            .build();
    // The dead relay's locks go when PostgreSQL notices its connection is gone.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (unsent() > 0 && System.nanoTime() < deadline) {
      relay.relayOnce();
      Thread.sleep(20);
    }

    assertThat(unsent()).isZero();
    assertThat(received()).as("each event delivered twice").isEqualTo(10);
    assertThat(ledgerRows()).as("each applied once").isEqualTo(5);
    assertThat(
            TestPostgres.count(
                "select count(*) from (select message_id from test_received group by message_id"
                    + " having count(*) = 2) twice"))
        .as("every one of the five twice")
        .isEqualTo(5);
  }

  private static long received() {
    return TestPostgres.count("select count(*) from test_received");
  }

  private static long ledgerRows() {
    return TestPostgres.count("select count(*) from test_ledger");
  }

  private static long unsent() {
    return TestPostgres.count("select count(*) from idemkit_outbox where sent_at is null");
  }
}
