package dev.idemkit.outbox.spi;

/**
 * What an {@link EventTransport} fails an event's stage with (or throws from {@link
 * EventTransport#send send}) when the transport as a whole cannot send now, through no fault of the
 * event: the broker is unreachable, the cluster did not answer. The relay then backs off (longer
 * with each round in a row that meets the outage) but does not count the attempt toward parking: an
 * outage of the whole transport would otherwise use up every waiting event's attempts and park them
 * all. The outbox row's {@code last_error} says {@code transport unavailable: <message>}.
 *
 * <p>Use it only when the failure says nothing about the event; an event the transport refuses (too
 * large, a topic that does not exist or may not be written) fails with any other exception, and
 * counts.
 */
public class TransportUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public TransportUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }

  public TransportUnavailableException(String message) {
    super(message);
  }
}
