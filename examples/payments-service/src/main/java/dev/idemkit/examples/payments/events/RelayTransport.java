package dev.idemkit.examples.payments.events;

import dev.idemkit.outbox.spi.EventTransport;
import java.util.function.UnaryOperator;

/**
 * The transport the outbox relay sends on (a broker's, or the embedded one that hands events to
 * this process's inboxes), with the number of unsent events of one aggregate a round may carry on
 * it. A bean of its own, so that a wrapper (the demo's fault injection) can be put around the
 * transport without the wiring knowing it.
 */
public record RelayTransport(EventTransport transport, int aggregateWindow) {

  /** The same, its transport replaced by {@code wrap} of it. */
  public RelayTransport map(UnaryOperator<EventTransport> wrap) {
    return new RelayTransport(wrap.apply(transport), aggregateWindow);
  }
}
