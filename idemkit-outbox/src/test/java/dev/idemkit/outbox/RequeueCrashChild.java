package dev.idemkit.outbox;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.UUID;

/**
 * Run by {@link RequeueCrashIT} in a JVM of its own: re-queues a parked message with a handler that
 * writes its ledger row, says {@code APPLYING} on stdout, and then hangs, before the apply can
 * commit, until the test kills it with {@code kill -9}.
 */
public final class RequeueCrashChild {

  private RequeueCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariDataSource ds = TestPostgres.pool(args[0], 4);
    MessageHandler rows = Fixtures.ledger("ledger", e -> false);
    MessageHandler hanging =
        (tx, m) -> {
          rows.apply(tx, m);
          System.out.println("APPLYING " + m.eventId());
          System.out.flush();
          Thread.sleep(Long.MAX_VALUE);
        };
    InboxConsumer ledger =
        InboxConsumer.builder("ledger", ds, hanging)
            .redeliveryHorizon(Duration.ofDays(1))
            .retention(Duration.ofDays(2))
            .build();
    ledger.requeue(UUID.fromString(args[1]));
    System.out.println("APPLIED (the test should have killed this process)");
  }
}
