package dev.idemkit.spring.boot;

import dev.idemkit.kafka.KafkaConsumerListener;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.outbox.EventEnvelope;
import java.util.List;

/** Hands what each Kafka consumer does beyond its inbox to every such listener bean (meters). */
final class CompositeKafkaConsumerListener implements KafkaConsumerListener {

  private final List<KafkaConsumerListener> listeners;

  private CompositeKafkaConsumerListener(List<KafkaConsumerListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  static KafkaConsumerListener of(List<KafkaConsumerListener> listeners) {
    if (listeners.isEmpty()) {
      return KafkaConsumerListener.NONE;
    }
    return listeners.size() == 1 ? listeners.get(0) : new CompositeKafkaConsumerListener(listeners);
  }

  @Override
  public void applied(String consumer, List<EventEnvelope> messages) {
    listeners.forEach(l -> l.applied(consumer, messages));
  }

  @Override
  public void unreadable(String consumer, int count) {
    listeners.forEach(l -> l.unreadable(consumer, count));
  }

  @Override
  public void partitionRetried(String consumer) {
    listeners.forEach(l -> l.partitionRetried(consumer));
  }

  @Override
  public void started(KafkaEventConsumer consumer) {
    listeners.forEach(l -> l.started(consumer));
  }
}
