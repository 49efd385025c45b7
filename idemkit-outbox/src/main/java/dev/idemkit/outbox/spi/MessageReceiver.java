package dev.idemkit.outbox.spi;

import dev.idemkit.outbox.EventEnvelope;
import java.util.List;

/**
 * The consuming side of a transport hands each received message to one of these; {@link
 * dev.idemkit.outbox.InboxConsumer} is the implementation, one per consumer name (a Kafka consumer
 * group per consumer name, say).
 *
 * <p>A transport acknowledges a message (commits its offset) only when its outcome {@link
 * Received#acknowledged() is acknowledged}; for a {@link Received#FAILED FAILED} message it must
 * deliver that message again later, and, to keep an aggregate's order, not acknowledge later
 * messages of the same partition past it (Kafka: seek back to the failed offset).
 *
 * <p>Thread-safe: a transport may call it from several threads at once, and two deliveries of the
 * same message may race; the inbox applies it once.
 */
public interface MessageReceiver {

  /** The consumer's name: the first half of the inbox's unique (consumer, message id). */
  String consumerName();

  /**
   * Applies {@code messages}, each in the database transaction that records it in the inbox.
   *
   * @return one outcome per message, in the order of {@code messages}
   */
  List<Received> receive(List<EventEnvelope> messages);

  /** What happened to one received message. */
  enum Received {
    /** The handler ran and its effects committed with the inbox row. Acknowledge. */
    APPLIED,
    /**
     * The inbox already had it, or (a consumer applying in sequence) its aggregate already applied
     * that sequence: nothing ran again. Acknowledge.
     */
    DUPLICATE,
    /**
     * (A consumer applying in sequence.) It came ahead of its aggregate's next sequence, so it was
     * not applied; the inbox holds it, with its envelope, and applies it once the gap closes.
     * Acknowledge: the inbox has it now.
     */
    HELD,
    /**
     * It failed too often and is parked in the inbox (with its envelope, for operators to
     * re-queue). Acknowledge: the inbox has it now.
     */
    PARKED,
    /** The handler failed; nothing was recorded as done. Do not acknowledge: deliver it again. */
    FAILED;

    /** Whether the transport may forget the message (commit its offset). */
    public boolean acknowledged() {
      return this != FAILED;
    }
  }
}
