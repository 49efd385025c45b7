package dev.idemkit.outbox;

/** An aggregate, ordered by type then id (the order its sequence row is locked in). */
record AggregateKey(String type, String id) implements Comparable<AggregateKey> {
  static AggregateKey of(EventEnvelope m) {
    return new AggregateKey(m.aggregateType(), m.aggregateId());
  }

  @Override
  public int compareTo(AggregateKey o) {
    int t = type.compareTo(o.type);
    return t != 0 ? t : id.compareTo(o.id);
  }
}
