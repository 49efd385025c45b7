package dev.idemkit.examples.payments.demo;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageFailedException;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.spi.EventTransport;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fault injection for the event flow (soak and demo), off unless configured: {@code
 * payments.events.faults.lost-ack} (probability that the transport delivers an event and its
 * acknowledgement is lost, so the relay sends it again) and {@code
 * payments.events.faults.consumer-failure} (probability that a consumer's handler fails after
 * writing, so its transaction rolls back and the message comes again).
 */
public final class EventFaults {

  private EventFaults() {}

  /** {@code transport}, losing each acknowledgement with probability {@code p}. */
  public static EventTransport losingAcks(EventTransport transport, double p) {
    if (p <= 0) {
      return transport;
    }
    return new EventTransport() {
      @Override
      public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
        List<CompletionStage<Void>> acks = transport.send(events);
        return acks.stream()
            .map(
                a ->
                    ThreadLocalRandom.current().nextDouble() < p
                        ? CompletableFuture.<Void>failedFuture(
                            new IllegalStateException("acknowledgement lost (injected)"))
                        : a)
            .toList();
      }

      @Override
      public Duration redeliveryHorizon() {
        return transport.redeliveryHorizon();
      }
    };
  }

  /**
   * {@code handler}, failing after its writes with probability {@code p} per message. A batch
   * ({@link MessageHandler#applyAll}) is written as the handler writes it, then the first unlucky
   * message fails it, named ({@link MessageFailedException}), as a handler that knows which one
   * failed would.
   */
  public static MessageHandler failing(MessageHandler handler, double p) {
    if (p <= 0) {
      return handler;
    }
    return new MessageHandler() {
      @Override
      public void apply(Connection tx, EventEnvelope m) throws Exception {
        handler.apply(tx, m);
        if (ThreadLocalRandom.current().nextDouble() < p) {
          throw new IllegalStateException("consumer failed after writing (injected)");
        }
      }

      @Override
      public void applyAll(Connection tx, List<EventEnvelope> messages) throws Exception {
        handler.applyAll(tx, messages);
        for (EventEnvelope m : messages) {
          if (ThreadLocalRandom.current().nextDouble() < p) {
            throw new MessageFailedException(
                m, new IllegalStateException("consumer failed after writing (injected)"));
          }
        }
      }
    };
  }
}
