package dev.idemkit.outbox;

import dev.idemkit.jdbc.DatabaseClock;
import dev.idemkit.outbox.spi.MessageReceiver;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A consumer with an inbox: applies each message once, whatever the transport redelivers.
 *
 * <p>A batch of messages is applied in one transaction that first claims their inbox rows (unique
 * per consumer name and message id) in one statement, then runs the {@link MessageHandler} ({@link
 * MessageHandler#applyAll applyAll}, once for the batch), then commits both. So:
 *
 * <ul>
 *   <li>a duplicate finds its row {@code PROCESSED}: nothing runs, the answer is {@link
 *       Received#DUPLICATE} (acknowledge);
 *   <li>a failure rolls back the handler's writes and the claims; the failed message is tried again
 *       on its own, and if it fails again the attempt is counted on its row ({@code FAILED}) in a
 *       transaction of its own, and the answer is {@link Received#FAILED} (redeliver); the rest of
 *       the batch is applied without it. After {@code maxAttempts} failures the row is {@code
 *       PARKED} with the message's envelope, for an operator to {@link #requeue re-queue};
 *   <li>two deliveries racing (two consumer instances, or a redelivery overtaking a slow first
 *       delivery) meet at the row: the second one's claim waits on the first one's uncommitted row,
 *       then finds it {@code PROCESSED} (duplicate) or, if the first rolled back, claims it.
 * </ul>
 *
 * <p><b>In sequence</b> ({@link Builder#inSequence}; every Kafka consumer is): the inbox also keeps
 * each aggregate's last applied sequence ({@code idemkit_inbox_sequence}), locked by the batch that
 * applies the aggregate's messages, so two deliveries of one aggregate take turns. A message with
 * the next sequence is applied; one behind it (a sequence already applied) is skipped ({@link
 * Received#DUPLICATE}); one ahead of it (an earlier event is parked, failing, or not there yet) is
 * <em>held</em>: kept in the inbox with its envelope ({@code HELD}), answered {@link Received#HELD}
 * (acknowledge), counted ({@link OutboxListener#messagesHeld}), listed for operators ({@link
 * #held}) and applied by {@link #releaseHeld} once the gap closes. A batch may carry several
 * messages of one aggregate, in order; after a failure, the aggregate's later messages in the batch
 * are answered {@link Received#FAILED} untried.
 *
 * <p>The inbox remembers processed ids for its {@code retention}, which must exceed the transport's
 * redelivery horizon: {@link Builder#build()} refuses otherwise. {@link #deleteProcessed} forgets
 * them after it, and a consumer in sequence from the first message seen also the aggregates that
 * nothing was applied to for as long (a consumer from sequence 1 keeps them: see there).
 *
 * <p>This class is the consumer's face; the work is done in rooms of one purpose each: {@link
 * InboxBatch} applies batches, {@link InboxRows} claims and records the messages' rows, {@link
 * SequenceGate} decides in sequence, {@link HeldMessages} and {@link ParkedMessages} keep what
 * waits, {@link InboxCleanup} forgets what is no longer needed.
 */
public final class InboxConsumer implements MessageReceiver {

  private final InboxConfig config;
  private final InboxBatch batches;
  private final HeldMessages heldMessages;
  private final ParkedMessages parkedMessages;
  private final InboxCleanup cleanup;

  private InboxConsumer(Builder b) {
    this.config =
        new InboxConfig(
            b.name,
            b.dataSource,
            b.handler,
            b.maxAttempts,
            b.retention,
            b.clock != null ? b.clock : DatabaseClock.of(b.dataSource),
            b.listener,
            b.sequenceStart);
    InboxRows rows = new InboxRows(config);
    this.batches = new InboxBatch(config, rows, new SequenceGate(config, rows));
    this.heldMessages = new HeldMessages(config, batches);
    this.parkedMessages = new ParkedMessages(config, rows, batches, heldMessages);
    this.cleanup = new InboxCleanup(config);
  }

  /**
   * A consumer named {@code name} (unique among the consumers sharing these tables) applying
   * messages with {@code handler} on {@code dataSource}.
   */
  public static Builder builder(String name, DataSource dataSource, MessageHandler handler) {
    return new Builder(name, dataSource, handler);
  }

  /**
   * How long processed ids are remembered (the delivery sender checks its retention against it).
   */
  Duration retention() {
    return config.retention();
  }

  @Override
  public String consumerName() {
    return config.name();
  }

  /** Whether this consumer applies each aggregate's messages in sequence. */
  public boolean inSequence() {
    return config.sequenceStart() != null;
  }

  /**
   * Applies {@code messages}: all in one transaction (one claim statement, one {@link
   * MessageHandler#applyAll}, one commit). If the handler names the message that failed ({@link
   * MessageFailedException}), the batch is rolled back and applied again without it, and it is
   * tried on its own; after any other failure each message is applied on its own. So a poison
   * message costs its neighbours a second try, never an effect. The same message twice in the list
   * is applied once (the second answered {@link Received#DUPLICATE}).
   */
  @Override
  public List<Received> receive(List<EventEnvelope> messages) {
    return batches.receive(messages);
  }

  /** Applies one message (see the class comment). */
  public Received receive(EventEnvelope message) {
    return batches.receiveOne(message);
  }

  /**
   * Applies held messages whose gap has closed, lowest sequence first, until none is left or none
   * makes progress (one that fails stays held, its attempt counted, and is tried at the next call;
   * it is parked after the last allowed attempt). Call it now and then (a Kafka consumer does,
   * every {@code heldRetryInterval}); {@link #requeue} calls it too. Does nothing unless {@link
   * #inSequence()}.
   *
   * @return how many held messages were applied
   */
  public int releaseHeld() throws SQLException {
    return releaseHeldMessages().size();
  }

  /** {@link #releaseHeld}, answering the messages it applied, in the order it applied them. */
  public List<EventEnvelope> releaseHeldMessages() throws SQLException {
    return heldMessages.release();
  }

  /** A message held behind a gap in its aggregate's sequence, for operators. */
  public record HeldMessage(EventEnvelope message, long lastApplied, Instant heldAt) {}

  /** Up to {@code limit} of this consumer's held messages, longest held first. */
  public List<HeldMessage> held(int limit) throws SQLException {
    return heldMessages.held(limit);
  }

  /** How many messages are held, and since when the oldest (null if none). */
  public record HeldSummary(long count, Instant oldestHeldAt) {}

  /** This consumer's held messages: how many, and the oldest's time; for meters and operators. */
  public HeldSummary heldSummary() throws SQLException {
    return heldMessages.heldSummary();
  }

  /** A parked message, for operators. */
  public record ParkedMessage(EventEnvelope message, int attempts, String lastError) {}

  /** Up to {@code limit} of this consumer's parked messages, oldest first. */
  public List<ParkedMessage> parked(int limit) throws SQLException {
    return parkedMessages.parked(limit);
  }

  /** How many of this consumer's messages are parked. */
  public long parkedCount() throws SQLException {
    return parkedMessages.parkedCount();
  }

  /**
   * Re-queues a parked message (after its cause was fixed) and applies it now, from the envelope
   * the inbox kept: the transport acknowledged it when it was parked and will not bring it again.
   * The row is unparked in the transaction that applies the message, so the message is parked or
   * applied, never in between, whatever crashes. A failure rolls that back: it stays parked, the
   * attempt counted and its error kept. In sequence, it is held if an earlier message of its
   * aggregate is still parked (re-queue them in sequence order), and the messages it held back are
   * applied after it.
   *
   * @return the outcome, or {@code null} if no such message was parked
   */
  public Received requeue(UUID messageId) throws SQLException {
    return parkedMessages.requeue(messageId);
  }

  /**
   * Forgets messages processed longer ago than the retention; answers how many. A consumer in
   * sequence from the first message seen ({@link SequenceStart#FIRST_SEEN}) also forgets the
   * aggregates that nothing was applied to for as long and that have no message waiting (held,
   * failed, parked): their rows in {@code idemkit_inbox_sequence} go, and an aggregate's next
   * message is then the first one seen, applied, as its row would have had it.
   *
   * <p>A consumer from sequence 1 ({@link SequenceStart#FROM_ONE}) keeps every aggregate's row: one
   * it forgot would hold the aggregate's next message for a sequence 1 that never comes again, and
   * it cannot tell a finished aggregate from one whose next event is only later.
   *
   * <p>Deletes in batches of {@value InboxCleanup#CLEANUP_BATCH} rows, each in a transaction of its
   * own, and passes by rows another transaction holds ({@code SKIP LOCKED}): safe to run on every
   * instance at once (they share the rows rather than wait for each other), and it never waits for
   * a consumer's batch.
   */
  public int deleteProcessed() throws SQLException {
    return cleanup.deleteProcessed();
  }

  /** Configures a consumer. */
  public static final class Builder {
    private final String name;
    private final DataSource dataSource;
    private final MessageHandler handler;
    private int maxAttempts = 5;
    private Duration retention = Duration.ofDays(14);
    private Duration redeliveryHorizon;
    private Clock clock;
    private OutboxListener listener = OutboxListener.NONE;
    private SequenceStart sequenceStart;

    private Builder(String name, DataSource dataSource, MessageHandler handler) {
      this.name = Objects.requireNonNull(name, "name");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** A message is parked after failing this many times (default 5; at least 1). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * How long processed message ids are remembered (default 14 days): positive, and longer than
     * the {@link #redeliveryHorizon redelivery horizon}.
     */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention);
      return this;
    }

    /**
     * The transport's {@link dev.idemkit.outbox.spi.EventTransport#redeliveryHorizon() redelivery
     * horizon}: required, positive, and the retention must exceed it.
     */
    public Builder redeliveryHorizon(Duration redeliveryHorizon) {
      this.redeliveryHorizon = Objects.requireNonNull(redeliveryHorizon);
      return this;
    }

    /**
     * The clock for due times, marks and cut-offs (default: the database server's, {@link
     * DatabaseClock}, so that instances whose clocks disagree agree on when a row is due).
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock);
      return this;
    }

    public Builder listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener);
      return this;
    }

    /**
     * Applies each aggregate's messages in sequence, holding those that come ahead of it (see the
     * class comment); {@code start} says what is expected of an aggregate with no record. For
     * transports that may deliver an aggregate's events out of order or past a parked one (Kafka);
     * the embedded transport needs it only to hold an aggregate's events behind a parked one.
     */
    public Builder inSequence(SequenceStart start) {
      this.sequenceStart = Objects.requireNonNull(start);
      return this;
    }

    /**
     * The consumer.
     *
     * @throws IllegalStateException if no redelivery horizon was given, or the retention does not
     *     exceed it: a redelivery after the inbox forgot the message would apply it twice
     * @throws IllegalArgumentException naming the setting and its value, if {@code maxAttempts} is
     *     below 1, or the retention or the redelivery horizon zero or negative
     */
    public InboxConsumer build() {
      String part = "Inbox consumer " + name;
      Settings.atLeastOne(part, "maxAttempts", maxAttempts);
      Settings.positive(part, "retention", retention);
      if (redeliveryHorizon == null) {
        throw new IllegalStateException(
            "Inbox consumer "
                + name
                + ": set redeliveryHorizon(transport.redeliveryHorizon()) so the inbox can check"
                + " that it remembers messages for longer than the transport may redeliver them");
      }
      Settings.positive(part, "redeliveryHorizon", redeliveryHorizon);
      if (retention.compareTo(redeliveryHorizon) <= 0) {
        throw new IllegalStateException(
            "Inbox consumer "
                + name
                + " refuses to start: its retention ("
                + retention
                + ") must exceed the transport's redelivery horizon ("
                + redeliveryHorizon
                + "), or a late redelivery of a forgotten message would be applied twice."
                + " Raise the retention.");
      }
      return new InboxConsumer(this);
    }
  }
}
