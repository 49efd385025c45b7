package dev.idemkit.examples.payments.events;

import dev.idemkit.outbox.MessageHandler;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What each consumer does with an event, by consumer name; each gets an inbox of that name. A bean
 * of its own, so that a wrapper (the demo's fault injection) can be put around every handler
 * without the wiring knowing it.
 */
public record EventHandlers(Map<String, MessageHandler> byName) {

  public EventHandlers {
    byName = Collections.unmodifiableMap(new LinkedHashMap<>(byName));
  }

  /** The same consumers, each handler replaced by {@code wrap} of it. */
  public EventHandlers map(UnaryOperator<MessageHandler> wrap) {
    Map<String, MessageHandler> wrapped = new LinkedHashMap<>();
    byName.forEach((name, handler) -> wrapped.put(name, wrap.apply(handler)));
    return new EventHandlers(wrapped);
  }
}
