package dev.idemkit.micrometer;

/**
 * The outbox's, inboxes' and delivery senders' meter names and tags, in one place. Tagged by
 * consumer name or delivery channel only: small, fixed sets chosen by the application; never by
 * tenant, aggregate or message id.
 */
public final class OutboxMetricNames {

  private OutboxMetricNames() {}

  /** Gauge: events waiting to be sent (not parked). No tags. */
  public static final String BACKLOG = "outbox.backlog";

  /** Time gauge: how long the oldest unsent event (parked or not) has waited; 0 when none. */
  public static final String OLDEST_UNSENT_AGE = "outbox.oldest_unsent.age";

  /** Gauge: parked events (failed their last attempt; an operator must re-queue them). */
  public static final String PARKED_EVENTS = "outbox.parked";

  /** Counter: events the relay marked sent after the transport acknowledged them. */
  public static final String PUBLISHED = "outbox.published.count";

  /** Counter: failed send attempts (each retried with backoff, or parked). */
  public static final String PUBLISH_FAILED = "outbox.publish_failed.count";

  /** Counter: messages a consumer applied; tag {@code consumer}. */
  public static final String CONSUMED = "inbox.consumed.count";

  /** Counter: duplicates a consumer's inbox recognised and skipped; tag {@code consumer}. */
  public static final String DUPLICATES_SKIPPED = "inbox.duplicates_skipped.count";

  /** Counter: a consumer's handler failed on a message (nothing marked); tag {@code consumer}. */
  public static final String CONSUME_FAILED = "inbox.consume_failed.count";

  /** Gauge: parked messages across the consumers given. No tags. */
  public static final String PARKED_MESSAGES = "inbox.parked";

  /**
   * Counter: messages a consumer applying in sequence held because they came ahead of their
   * aggregate's next sequence; tag {@code consumer}.
   */
  public static final String GAP_HELD = "inbox.gap_held.count";

  /** Counter: held messages applied once their gap closed; tag {@code consumer}. */
  public static final String GAP_RELEASED = "inbox.gap_released.count";

  /**
   * Counter: messages skipped as behind their aggregate's last applied sequence; tag {@code
   * consumer}.
   */
  public static final String STALE_SKIPPED = "inbox.stale_skipped.count";

  /**
   * Gauge: messages held right now behind a gap in their aggregate's sequence, across the consumers
   * given (no tags), or of one Kafka consumer ({@code KafkaConsumerMetrics#monitor}, tag {@code
   * consumer}).
   */
  public static final String HELD_MESSAGES = "inbox.held";

  /** Counter: recorded side effects delivered; tag {@code channel}. */
  public static final String DELIVERED = "delivery.delivered.count";

  /**
   * Gauge: deliveries parked after their last attempt, on every channel (only where a count is
   * given: {@link OutboxMetrics#parkedDeliveries}).
   */
  public static final String PARKED_DELIVERIES = "delivery.parked";

  /** The consumer's name. */
  public static final String TAG_CONSUMER = "consumer";

  /** The delivery channel, e.g. {@code mail}. */
  public static final String TAG_CHANNEL = "channel";
}
