package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.outbox.spi.MessageReceiver;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The default transport: no broker. The relay's batch goes straight to every subscribed consumer's
 * inbox, on the relay's thread; an event is acknowledged once every consumer acknowledged it
 * (applied, duplicate, or parked in its inbox). An event one consumer failed on is sent again later
 * to all of them; those that have it already skip it as a duplicate.
 *
 * <p>Redelivery horizon: the relay redelivers an unacknowledged event until it is sent or parked,
 * and an operator may re-queue a parked event later; the horizon given here is the promise that
 * re-queues happen within it (default 7 days), and each inbox's retention must exceed it.
 */
public final class EmbeddedTransport implements EventTransport {

  /** The default redelivery horizon. */
  public static final Duration DEFAULT_REDELIVERY_HORIZON = Duration.ofDays(7);

  private final List<MessageReceiver> receivers = new CopyOnWriteArrayList<>();
  private final Duration redeliveryHorizon;

  private EmbeddedTransport(Duration redeliveryHorizon) {
    this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
  }

  /** A transport with the default redelivery horizon. */
  public static EmbeddedTransport create() {
    return new EmbeddedTransport(DEFAULT_REDELIVERY_HORIZON);
  }

  /**
   * A transport promising re-queues within {@code redeliveryHorizon}.
   *
   * @throws IllegalArgumentException if the horizon is zero or negative, naming its value
   */
  public static EmbeddedTransport create(Duration redeliveryHorizon) {
    return new EmbeddedTransport(
        Settings.positive("EmbeddedTransport", "redeliveryHorizon", redeliveryHorizon));
  }

  /** Delivers every event from now on to {@code receiver} too. */
  public EmbeddedTransport subscribe(MessageReceiver receiver) {
    receivers.add(Objects.requireNonNull(receiver));
    return this;
  }

  @Override
  public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
    boolean[] failed = new boolean[events.size()];
    String[] why = new String[events.size()];
    for (MessageReceiver r : receivers) {
      List<Received> outcomes;
      try {
        outcomes = r.receive(events);
      } catch (RuntimeException | Error e) {
        outcomes = null;
        for (int i = 0; i < events.size(); i++) {
          failed[i] = true;
          why[i] = r.consumerName() + ": " + e;
        }
      }
      if (outcomes == null) {
        continue;
      }
      for (int i = 0; i < events.size(); i++) {
        if (!outcomes.get(i).acknowledged()) {
          failed[i] = true;
          why[i] = r.consumerName() + " failed on it";
        }
      }
    }
    List<CompletionStage<Void>> acks = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) {
      acks.add(
          failed[i]
              ? CompletableFuture.failedFuture(new IllegalStateException(why[i]))
              : CompletableFuture.completedFuture(null));
    }
    return acks;
  }

  @Override
  public Duration redeliveryHorizon() {
    return redeliveryHorizon;
  }
}
