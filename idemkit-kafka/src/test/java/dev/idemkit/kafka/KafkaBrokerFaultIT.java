package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.applications;
import static dev.idemkit.kafka.Fixture.appliedOrder;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.count;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.OutboxRelay;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The broker itself stopped and started again while events are being written and relayed. */
class KafkaBrokerFaultIT {

  @Test
  void aBrokerStoppedAndRestartedMidStreamLosesNoEventTheRelayBacksOffAndResumes()
      throws Exception {
    String type = unique("transfer");
    String consumerName = unique("ledger");
    List<String> aggregates = IntStream.range(0, 20).mapToObj(i -> "t" + i).toList();
    List<EventEnvelope> appended = new CopyOnWriteArrayList<>();
    AtomicReference<Exception> writerFailed = new AtomicReference<>();
    CountDownLatch brokerDown = new CountDownLatch(1);

    try (KafkaBroker broker = KafkaBroker.start()) {
      String bootstrap = broker.bootstrapServers();
      broker.createTopic("idemkit.events." + type, 2);
      try (KafkaTransport transport = Fixture.transport(bootstrap);
          OutboxRelay relay = Fixture.relay(transport).build().start();
          KafkaEventConsumer consumer =
              Fixture.consumer(bootstrap, consumerName, type).build().start()) {
        // The service keeps committing events, broker or not: 30 rounds over 20 aggregates, the
        // last 20 only once the broker is down (else a slow consumer start could let the relay
        // send everything before the stop, and there would be nothing to fail on).
        Thread writer =
            new Thread(
                () -> {
                  try {
                    for (int round = 1; round <= 30; round++) {
                      if (round == 11) {
                        brokerDown.await();
                      }
                      appended.addAll(append(type, aggregates, "r" + round));
                      Thread.sleep(150);
                    }
                  } catch (Exception e) {
                    writerFailed.set(e);
                  }
                });
        writer.setDaemon(true); // never outlives a failed test waiting for the stop
        writer.start();
        await(Duration.ofSeconds(60), "some applied", () -> applications(consumerName).size() > 40);

        broker.stop();
        brokerDown.countDown();
        long appliedWhileDown = applications(consumerName).size();
        try {
          // Up to two minutes: a round in flight at the stop ends only after the producer's
          // delivery timeout (20 s) or the relay's acknowledgement timeout (30 s), and the
          // producer's own metadata and coordinator timeouts can add to it on a loaded machine.
          await(
              Duration.ofSeconds(120),
              "the relay failing to send while the broker is down",
              () -> {
                if (writerFailed.get() != null) {
                  throw new AssertionError("the writer failed", writerFailed.get());
                }
                // The cluster's outage, not the events': recorded, but no attempt counted.
                return count(
                        "select count(*) from idemkit_outbox where aggregate_type = '"
                            + type
                            + "' and sent_at is null and attempts = 0"
                            + " and last_error like 'transport unavailable: %'")
                    > 0;
              });
        } catch (AssertionError timedOut) {
          // What the relay and the writer had done, to tell a relay that never tried from a
          // writer that stopped appending or events that all left before the stop.
          throw new AssertionError(
              timedOut.getMessage()
                  + "; appended "
                  + appended.size()
                  + ", applied "
                  + applications(consumerName).size()
                  + " ("
                  + appliedWhileDown
                  + " at the stop), unsent "
                  + count(
                      "select count(*) from idemkit_outbox where aggregate_type = '"
                          + type
                          + "' and sent_at is null")
                  + ", writer alive "
                  + writer.isAlive()
                  + "; relay threads: "
                  + relayStacks(),
              timedOut.getCause() != null ? timedOut.getCause() : timedOut);
        }
        assertThat(applications(consumerName).size()).isEqualTo(appliedWhileDown);
        broker.restart();

        writer.join();
        assertThat(writerFailed.get()).isNull();
        await(
            Duration.ofSeconds(120),
            "all 600 applied",
            () -> applications(consumerName).size() == appended.size());
      }
    }
    assertThat(appended).hasSize(600);
    assertThat(applications(consumerName).keySet())
        .containsExactlyInAnyOrderElementsOf(
            appended.stream().map(EventEnvelope::eventId).toList());
    assertThat(applications(consumerName).values()).containsOnly(1);
    assertThat(appliedOrder(consumerName).values())
        .allSatisfy(
            seqs ->
                assertThat(seqs)
                    .containsExactlyElementsOf(
                        IntStream.rangeClosed(1, 30).mapToObj(i -> (long) i).toList()));
    assertThat(
            count(
                "select count(*) from idemkit_outbox where aggregate_type = '"
                    + type
                    + "' and (sent_at is null or parked_at is not null)"))
        .isZero();
  }

  /**
   * A broker that is down when a round starts: the producer waits max.block.ms (5 s) for the first
   * event's metadata, which Kafka 4 reports through the send's callback, not by throwing; the
   * batch's other 19 events then fail at once, so the round (and its transaction, which holds the
   * batch's row locks) ends after about one max.block.ms, not 20 of them. The failure is the
   * cluster's outage, not the events': even with one attempt allowed, nothing is parked and no
   * attempt counted, and the error says the broker is unreachable.
   */
  @Test
  void aRoundWithTheBrokerDownEndsAfterOneMetadataWaitNotOnePerEvent() throws Exception {
    String type = unique("refund");
    List<String> aggregates = IntStream.range(0, 20).mapToObj(i -> "r" + i).toList();
    try (KafkaBroker broker = KafkaBroker.start()) {
      String bootstrap = broker.bootstrapServers();
      broker.stop();
      append(type, aggregates, "while-down");
      try (KafkaTransport transport = Fixture.transport(bootstrap);
          OutboxRelay relay = Fixture.relay(transport).batchSize(20).maxAttempts(1).build()) {
        long started = System.nanoTime();
        OutboxRelay.Round round = relay.relayOnce();
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(round.picked()).isEqualTo(20);
        assertThat(round.failed()).isEqualTo(20);
        assertThat(round.parked()).isZero();
        assertThat(took).isLessThan(Duration.ofSeconds(15)); // 20 × 5 s = 100 s before the fix
      }
      // Read on another connection: the round's marks are committed, so its transaction is over.
      assertThat(
              count(
                  "select count(*) from idemkit_outbox where aggregate_type = '"
                      + type
                      + "' and sent_at is null and parked_at is null and attempts = 0"
                      + " and last_error like 'transport unavailable: no connection to any Kafka"
                      + " broker%'"))
          .isEqualTo(20);
      assertThat(
              count(
                  "select count(*) from idemkit_outbox where aggregate_type = '"
                      + type
                      + "' and sent_at is not null"))
          .isZero();
    }
  }

  /** Where the relay's threads (and the producer's) are, for a timed-out wait. */
  private static String relayStacks() {
    StringBuilder out = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (thread, stack) -> {
              String name = thread.getName();
              if (name.contains("outbox") || name.contains("relay") || name.contains("producer")) {
                out.append("\n  ").append(name).append(" ").append(thread.getState());
                for (int i = 0; i < Math.min(12, stack.length); i++) {
                  out.append("\n    at ").append(stack[i]);
                }
              }
            });
    return out.toString();
  }
}
