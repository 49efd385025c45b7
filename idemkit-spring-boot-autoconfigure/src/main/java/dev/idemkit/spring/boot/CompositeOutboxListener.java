package dev.idemkit.spring.boot;

import dev.idemkit.outbox.OutboxListener;
import java.util.List;

/** Hands what the relay, the inboxes and the senders do to each outbox listener bean (meters). */
final class CompositeOutboxListener implements OutboxListener {

  private final List<OutboxListener> listeners;

  private CompositeOutboxListener(List<OutboxListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  static OutboxListener of(List<OutboxListener> listeners) {
    if (listeners.isEmpty()) {
      return OutboxListener.NONE;
    }
    return listeners.size() == 1 ? listeners.get(0) : new CompositeOutboxListener(listeners);
  }

  @Override
  public void published(int count) {
    listeners.forEach(l -> l.published(count));
  }

  @Override
  public void publishFailed(int count) {
    listeners.forEach(l -> l.publishFailed(count));
  }

  @Override
  public void eventsParked(int count) {
    listeners.forEach(l -> l.eventsParked(count));
  }

  @Override
  public void consumed(String consumer, int count) {
    listeners.forEach(l -> l.consumed(consumer, count));
  }

  @Override
  public void duplicatesSkipped(String consumer, int count) {
    listeners.forEach(l -> l.duplicatesSkipped(consumer, count));
  }

  @Override
  public void consumeFailed(String consumer) {
    listeners.forEach(l -> l.consumeFailed(consumer));
  }

  @Override
  public void messageParked(String consumer) {
    listeners.forEach(l -> l.messageParked(consumer));
  }

  @Override
  public void messagesHeld(String consumer, int count) {
    listeners.forEach(l -> l.messagesHeld(consumer, count));
  }

  @Override
  public void heldReleased(String consumer, int count) {
    listeners.forEach(l -> l.heldReleased(consumer, count));
  }

  @Override
  public void staleSkipped(String consumer, int count) {
    listeners.forEach(l -> l.staleSkipped(consumer, count));
  }

  @Override
  public void delivered(String channel, int count) {
    listeners.forEach(l -> l.delivered(channel, count));
  }
}
