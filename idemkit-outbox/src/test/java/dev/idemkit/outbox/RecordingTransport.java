package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.EventTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A transport that records what it was sent and acknowledges unless {@code fails} says otherwise;
 * it checks, at each send, that the aggregate's previous event had been acknowledged (order) and
 * that the event is not already in another relay's hands (exclusivity: between its send and the
 * next send of anything, an acknowledged event must not come back).
 */
class RecordingTransport implements EventTransport {

  final List<EventEnvelope> sent = new CopyOnWriteArrayList<>();
  final Map<UUID, AtomicInteger> sends = new ConcurrentHashMap<>();
  final List<String> violations = new CopyOnWriteArrayList<>();
  private final Map<String, Long> lastAcked = new ConcurrentHashMap<>();
  private volatile Predicate<EventEnvelope> fails;

  RecordingTransport(Predicate<EventEnvelope> fails) {
    this.fails = fails;
  }

  RecordingTransport() {
    this(e -> false);
  }

  void failWhen(Predicate<EventEnvelope> fails) {
    this.fails = fails;
  }

  /** While down, every event fails as the transport's outage (and is recorded as sent to it). */
  private volatile boolean down;

  void down(boolean down) {
    this.down = down;
  }

  @Override
  public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
    List<CompletionStage<Void>> acks = new ArrayList<>();
    for (EventEnvelope e : events) {
      sent.add(e);
      sends.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
      long acked = lastAcked.getOrDefault(e.aggregateId(), 0L);
      if (e.sequence() != acked + 1) {
        violations.add(
            e.aggregateId() + "#" + e.sequence() + " sent while #" + acked + " was the last acked");
      }
      if (down) {
        acks.add(
            CompletableFuture.failedFuture(
                new dev.idemkit.outbox.spi.TransportUnavailableException(
                    "no connection to the broker")));
      } else if (fails.test(e)) {
        acks.add(CompletableFuture.failedFuture(new IllegalStateException("broker down")));
      } else {
        lastAcked.put(e.aggregateId(), e.sequence());
        acks.add(CompletableFuture.completedFuture(null));
      }
    }
    return acks;
  }

  @Override
  public Duration redeliveryHorizon() {
    return Duration.ofDays(1);
  }
}
