package dev.idemkit.outbox.spi;

import dev.idemkit.outbox.EventEnvelope;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The publishing side of a transport: what the {@link dev.idemkit.outbox.OutboxRelay relay} hands
 * committed outbox events to. The embedded default ({@link dev.idemkit.outbox.EmbeddedTransport})
 * delivers in-process; a broker transport (Kafka) implements the same contract.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li><b>At least once.</b> The relay marks an event sent only after its stage completed
 *       normally. A relay that dies in between sends the event again, with the same {@link
 *       EventEnvelope#eventId() id}; consumers deduplicate on it (the inbox does). A transport
 *       therefore never needs to deduplicate, and must never drop an event it acknowledged.
 *   <li><b>Partitions keyed by aggregate.</b> Route by {@link EventEnvelope#partitionKey()} so one
 *       aggregate's events stay in order. With the relay's default aggregate window of 1 it never
 *       has two events of one aggregate in flight at once (it sends an aggregate's next event only
 *       after the previous one was acknowledged), so the transport need not preserve order inside a
 *       batch. With a {@link dev.idemkit.outbox.OutboxRelay.Builder#aggregateWindow window} of n
 *       &gt; 1, a batch holds up to n consecutive events of an aggregate, in sequence: the
 *       transport must then send them in the batch's order on the aggregate's partition (Kafka's
 *       idempotent producer does), and a later one may still be acknowledged while an earlier one
 *       failed, which is why the window is only for consumers that apply in sequence.
 *   <li><b>Asynchronous acknowledgement per event.</b> {@link #send} returns at once with one stage
 *       per event; the relay waits for them up to its acknowledgement timeout, marks the
 *       acknowledged ones sent and retries the rest (failed, or not acknowledged in time) with
 *       backoff. A failure counts toward parking the event after the relay's last attempt, unless
 *       it is a {@link TransportUnavailableException}: the transport's outage, not the event's
 *       fault.
 *   <li><b>Acknowledged means durable.</b> Complete a stage only when the event can no longer be
 *       lost by the transport (Kafka: the broker acknowledged with {@code acks=all}; embedded:
 *       every consumer's inbox committed it).
 * </ul>
 *
 * <p>Implementations must be thread-safe: several relays (threads or processes) may call {@link
 * #send} at once, with disjoint batches.
 */
public interface EventTransport extends AutoCloseable {

  /**
   * Starts sending {@code events}, a batch of committed, unsent outbox events: at most one per
   * aggregate with the relay's default aggregate window, up to the window's size (consecutive, in
   * sequence) otherwise.
   *
   * @return one stage per event, in the order of {@code events}: completes normally once the
   *     transport acknowledged that event durably; exceptionally if it could not be sent (its
   *     message is recorded on the outbox row for operators): with a {@link
   *     TransportUnavailableException} when the transport as a whole cannot send (broker
   *     unreachable), which the relay retries without counting toward parking the event, with any
   *     other exception when it is the event's failure, which counts. Should not throw; if it does,
   *     the whole batch counts as failed (as the transport's outage if the exception is a {@code
   *     TransportUnavailableException}).
   */
  List<CompletionStage<Void>> send(List<EventEnvelope> events);

  /**
   * How long after an event was first delivered the transport may still deliver it (again) to a
   * consumer: a broker's retention of the topic, or the embedded transport's configured bound. A
   * consumer's inbox must remember message ids for longer than this, or a late redelivery would be
   * applied twice; {@link dev.idemkit.outbox.InboxConsumer} refuses to start otherwise.
   */
  Duration redeliveryHorizon();

  /** Releases the transport's resources (producers, threads). The default does nothing. */
  @Override
  default void close() {}
}
