package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;

/**
 * A message reached the inbox ahead of its aggregate's next sequence: applying it would break the
 * aggregate's order, so it is not applied. Normally such a message is held before it gets there;
 * this shows up when an operator re-queues a parked message while an earlier one of its aggregate
 * is still parked (re-queue them in sequence order).
 */
public final class SequenceGapException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  SequenceGapException(EventEnvelope m, long lastApplied) {
    super(
        m.aggregateType()
            + " "
            + m.aggregateId()
            + ": event "
            + m.sequence()
            + " arrived but the last applied is "
            + lastApplied
            + "; not applied out of order");
  }
}
