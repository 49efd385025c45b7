package dev.idemkit.kafka;

/** What a consumer expects first from an aggregate it has no record of. */
public enum SequenceStart {
  /** Sequence 1: anything later is a gap, held until 1 arrives (the default). */
  FROM_ONE,
  /**
   * Whatever arrives first: for a consumer that joins a stream whose beginning it will never see
   * (its earlier events were consumed by another transport, or are past the topic's retention).
   */
  FIRST_SEEN
}
