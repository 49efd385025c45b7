package dev.idemkit.outbox;

/**
 * Told what the relay, the inbox consumers and the delivery senders do, for meters; every method
 * has a no-op default (idemkit-micrometer implements it). Called on the worker's thread after the
 * transaction committed; must be fast and must not throw.
 */
public interface OutboxListener {

  /** Does nothing. */
  OutboxListener NONE = new OutboxListener() {};

  /** The relay marked {@code count} events sent (the transport acknowledged them). */
  default void published(int count) {}

  /** {@code count} events failed to send this round (will be retried, or were parked). */
  default void publishFailed(int count) {}

  /** {@code count} events failed their last allowed attempt and were parked. */
  default void eventsParked(int count) {}

  /** {@code consumer} applied {@code count} messages. */
  default void consumed(String consumer, int count) {}

  /** {@code consumer} received {@code count} messages its inbox already had, and skipped them. */
  default void duplicatesSkipped(String consumer, int count) {}

  /** {@code consumer}'s handler failed on a message (nothing was marked). */
  default void consumeFailed(String consumer) {}

  /** {@code consumer} parked a message after its last allowed attempt. */
  default void messageParked(String consumer) {}

  /** {@code consumer} held {@code count} messages that came ahead of their aggregate's sequence. */
  default void messagesHeld(String consumer, int count) {}

  /** {@code consumer} applied {@code count} held messages once their gap closed. */
  default void heldReleased(String consumer, int count) {}

  /**
   * {@code consumer} skipped {@code count} messages behind their aggregate's last applied sequence
   * (another message id for a sequence already applied).
   */
  default void staleSkipped(String consumer, int count) {}

  /** A sender on {@code channel} delivered {@code count} recorded side effects. */
  default void delivered(String channel, int count) {}
}
