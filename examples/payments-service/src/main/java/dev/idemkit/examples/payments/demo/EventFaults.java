package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.events.EventHandlers;
import dev.idemkit.examples.payments.events.RelayTransport;
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
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Fault injection for the event flow (soak, chaos run and demo), present only when configured
 * ({@link DemoConfiguration}): {@code payments.events.faults.lost-ack} (probability that the
 * transport delivers an event and its acknowledgement is lost, so the relay sends it again) and
 * {@code payments.events.faults.consumer-failure} (probability that a consumer's handler fails
 * after writing, so its transaction rolls back and the message comes again). It wraps the event
 * flow's beans as they are made ({@link RelayTransport}, {@link EventHandlers}): the wiring does
 * not know it is there.
 */
public final class EventFaults implements BeanPostProcessor {

  private final double lostAck;
  private final double consumerFailure;

  /** Each probability in [0, 1]; 0 leaves that part alone. */
  public EventFaults(double lostAck, double consumerFailure) {
    this.lostAck = lostAck;
    this.consumerFailure = consumerFailure;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof RelayTransport relay) {
      return relay.map(transport -> losingAcks(transport, lostAck));
    }
    if (bean instanceof EventHandlers handlers) {
      return handlers.map(handler -> failing(handler, consumerFailure));
    }
    return bean;
  }

  /** {@code transport}, losing each acknowledgement with probability {@code p}. */
  static EventTransport losingAcks(EventTransport transport, double p) {
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
  static MessageHandler failing(MessageHandler handler, double p) {
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
