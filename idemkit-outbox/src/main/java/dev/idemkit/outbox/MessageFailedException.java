package dev.idemkit.outbox;

import java.util.Objects;

/**
 * Thrown by {@link MessageHandler#applyAll} to say which message of the batch failed: the inbox
 * then rolls the batch back, applies the messages before it again as a batch, tries that one on its
 * own (counting the attempt if it fails again) and goes on with the rest. Any other exception from
 * {@code applyAll} makes the inbox apply the batch's messages one by one.
 */
public final class MessageFailedException extends Exception {

  private static final long serialVersionUID = 1L;

  private final transient EventEnvelope failedMessage;

  /** {@code message} (one of the batch) failed because of {@code cause}. */
  public MessageFailedException(EventEnvelope message, Throwable cause) {
    super(
        Objects.requireNonNull(message, "message").type()
            + " "
            + message.eventId()
            + " failed: "
            + cause,
        cause);
    this.failedMessage = message;
  }

  /** The message that failed. */
  public EventEnvelope failedMessage() {
    return failedMessage;
  }
}
