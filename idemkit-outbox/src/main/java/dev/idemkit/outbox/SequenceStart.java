package dev.idemkit.outbox;

/**
 * What a consumer applying in sequence ({@link InboxConsumer.Builder#inSequence}) expects first
 * from an aggregate it has no record of.
 */
public enum SequenceStart {
  /**
   * Sequence 1: anything later is held until 1 has been applied (the default); unless the inbox
   * already processed earlier events of the aggregate, without keeping sequences (on the embedded
   * transport): then it goes on after the highest of them still in this database's outbox.
   */
  FROM_ONE,
  /**
   * Whatever arrives first: for a consumer that joins a stream whose beginning it will never see
   * (its earlier events were consumed by another transport, or are past the topic's retention).
   */
  FIRST_SEEN
}
