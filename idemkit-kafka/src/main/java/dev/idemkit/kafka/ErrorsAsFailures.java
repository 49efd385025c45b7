package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageFailedException;
import dev.idemkit.outbox.MessageHandler;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;

/**
 * The application's handler as the consumer's inbox sees it: an {@link Error} it throws ({@code
 * AssertionError}, {@code StackOverflowError}, {@code OutOfMemoryError}, …) fails the message like
 * an exception does, so the inbox rolls the transaction back, counts the attempt and parks the
 * message after the last one, instead of the error unwinding through the inbox into the polling
 * thread and ending it (after which nothing would be consumed, silently).
 */
final class ErrorsAsFailures implements MessageHandler {

  private final MessageHandler handler;

  ErrorsAsFailures(MessageHandler handler) {
    this.handler = Objects.requireNonNull(handler, "handler");
  }

  @Override
  public void apply(Connection transaction, EventEnvelope message) throws Exception {
    try {
      handler.apply(transaction, message);
    } catch (Error e) {
      throw new MessageFailedException(message, e);
    }
  }

  @Override
  public void applyAll(Connection transaction, List<EventEnvelope> messages) throws Exception {
    try {
      handler.applyAll(transaction, messages);
    } catch (Error e) {
      if (messages.size() == 1) {
        // Named, so the inbox records the error itself as the message's last error.
        throw new MessageFailedException(messages.get(0), e);
      }
      // Which message it was is unknown: the inbox applies the batch's messages one by one.
      throw new HandlerError(e);
    }
  }

  /** An error the handler threw for a batch, as an exception the inbox handles. */
  static final class HandlerError extends Exception {
    private static final long serialVersionUID = 1L;

    HandlerError(Error cause) {
      super("the handler threw " + cause, cause);
    }
  }
}
