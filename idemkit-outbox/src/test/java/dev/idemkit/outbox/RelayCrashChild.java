package dev.idemkit.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.outbox.spi.EventTransport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Run by {@link RelayKillIT} in a JVM of its own: one relay round whose transport delivers the
 * batch to the ledger consumer (which commits its effect and inbox row), says {@code DELIVERED} on
 * stdout, and then hangs, before the relay can mark anything, until the test kills it with {@code
 * kill -9}.
 */
public final class RelayCrashChild {

  private RelayCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariDataSource ds = TestPostgres.pool(args[0], 4);
    InboxConsumer ledger =
        InboxConsumer.builder("ledger", ds, Fixtures.ledger("ledger", e -> false))
            .redeliveryHorizon(Duration.ofDays(1))
            .retention(Duration.ofDays(2))
            .build();
    EmbeddedTransport embedded =
        EmbeddedTransport.create(Duration.ofDays(1)).subscribe(Fixtures.counting(ledger, ds));
    EventTransport hanging =
        new EventTransport() {
          @Override
          public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
            List<CompletionStage<Void>> acks = embedded.send(events);
            System.out.println("DELIVERED " + events.size());
            System.out.flush();
            try {
              Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return acks;
          }

          @Override
          public Duration redeliveryHorizon() {
            return embedded.redeliveryHorizon();
          }
        };
    OutboxRelay.builder(ds, hanging).build().relayOnce();
    System.out.println("MARKED (the test should have killed this process)");
  }
}
