package dev.idemkit.examples.payments.events;

import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.spring.boot.Inboxes;
import java.util.List;
import java.util.Map;

/**
 * The inbox consumers by name, for operators; an {@link Inboxes} bean, so the starter's inbox
 * cleanup ({@code idemkit.inbox.cleanup.*}) forgets their processed ids after their retention.
 */
public record Consumers(Map<String, InboxConsumer> byName) implements Inboxes {
  public List<InboxConsumer> all() {
    return List.copyOf(byName.values());
  }

  @Override
  public List<InboxConsumer> inboxes() {
    return all();
  }
}
