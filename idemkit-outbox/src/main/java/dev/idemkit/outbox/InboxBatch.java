package dev.idemkit.outbox;

import dev.idemkit.jdbc.Transactions;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Applying messages: a batch in one transaction (claims, the {@link MessageHandler}, one commit),
 * split when a message fails so that a poison message costs its neighbours a second try, never an
 * effect; each message's outcome; what the listener is told once a transaction committed.
 */
final class InboxBatch {

  private static final Logger LOG = Logger.getLogger(InboxConsumer.class.getName());

  /** PostgreSQL's SQLSTATE for a statement sent in an aborted transaction. */
  private static final String IN_FAILED_TRANSACTION = "25P02";

  private final InboxRows rows;
  private final SequenceGate gate;

  private final InboxConfig inbox;

  InboxBatch(InboxConfig config, InboxRows rows, SequenceGate gate) {
    this.inbox = config;
    this.rows = rows;
    this.gate = gate;
  }

  /** See {@link InboxConsumer#receive(List)}. */
  List<Received> receive(List<EventEnvelope> messages) {
    Received[] out = new Received[messages.size()];
    Map<UUID, Integer> first = new HashMap<>();
    List<Integer> unique = new ArrayList<>(messages.size());
    for (int i = 0; i < messages.size(); i++) {
      if (first.putIfAbsent(messages.get(i).eventId(), i) == null) {
        unique.add(i);
      }
    }
    process(messages, unique, out);
    for (int i = 0; i < out.length; i++) {
      if (out[i] == null) {
        Received r = out[first.get(messages.get(i).eventId())];
        out[i] = r == Received.APPLIED ? Received.DUPLICATE : r;
      }
    }
    return Arrays.asList(out);
  }

  /** Applies the messages at {@code indices} (distinct ids, in order) into {@code out}. */
  private void process(List<EventEnvelope> all, List<Integer> indices, Received[] out) {
    if (indices.isEmpty()) {
      return;
    }
    if (indices.size() == 1) {
      out[indices.get(0)] = receiveOne(all.get(indices.get(0)));
      return;
    }
    List<EventEnvelope> batch = new ArrayList<>(indices.size());
    for (int i : indices) {
      batch.add(all.get(i));
    }
    int failedAt = -1;
    try {
      Received[] r = apply(c -> batch);
      for (int k = 0; k < r.length; k++) {
        out[indices.get(k)] = r[k];
      }
      return;
    } catch (Exception | Error e) {
      // An Error (an AssertionError, a StackOverflowError in the handler) fails the batch like an
      // exception: it must not escape to the transport's thread and end its loop.
      if (e instanceof MessageFailedException named) {
        failedAt = indexOf(batch, named.failedMessage());
      }
      LOG.log(
          Level.FINE,
          failedAt >= 0
              ? inbox.name() + ": " + e.getMessage() + "; the batch goes on without it"
              : inbox.name() + ": a batch of " + batch.size() + " failed; one by one now",
          e);
    }
    if (failedAt >= 0) {
      // The ones before it again as a batch, it on its own, then the rest as a batch (but its
      // aggregate's later messages, if it failed: they wait for it).
      process(all, indices.subList(0, failedAt), out);
      out[indices.get(failedAt)] = receiveOne(batch.get(failedAt));
      process(
          all,
          holdBackBehindFailures(
              all,
              indices.subList(0, failedAt + 1),
              indices.subList(failedAt + 1, indices.size()),
              out),
          out);
    } else {
      // Which one failed is unknown: each on its own.
      List<Integer> rest = indices;
      while (!rest.isEmpty()) {
        int first = rest.get(0);
        out[first] = receiveOne(all.get(first));
        rest = holdBackBehindFailures(all, List.of(first), rest.subList(1, rest.size()), out);
      }
    }
  }

  private static int indexOf(List<EventEnvelope> batch, EventEnvelope m) {
    for (int k = 0; k < batch.size(); k++) {
      if (m != null && batch.get(k).eventId().equals(m.eventId())) {
        return k;
      }
    }
    return -1;
  }

  /**
   * Answers {@link Received#FAILED}, untried, each message at {@code later} whose aggregate has a
   * message at {@code tried} that failed (an aggregate's later messages wait for its failed one);
   * returns the others' indices, in order.
   */
  private static List<Integer> holdBackBehindFailures(
      List<EventEnvelope> all, List<Integer> tried, List<Integer> later, Received[] out) {
    Set<AggregateKey> failed = new HashSet<>();
    for (int i : tried) {
      if (out[i] == Received.FAILED) {
        failed.add(AggregateKey.of(all.get(i)));
      }
    }
    List<Integer> rest = new ArrayList<>(later.size());
    for (int i : later) {
      if (failed.contains(AggregateKey.of(all.get(i)))) {
        out[i] = Received.FAILED;
      } else {
        rest.add(i);
      }
    }
    return rest;
  }

  Received receiveOne(EventEnvelope message) {
    try {
      return apply(c -> List.of(message))[0];
    } catch (Exception | Error e) {
      Throwable cause =
          e instanceof MessageFailedException && e.getCause() != null ? e.getCause() : e;
      if (cause instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
        // The thread is being stopped (a relay's close() on the embedded transport, a consumer
        // shutting down): not the message's failure. Rolled back, no attempt counted; the
        // transport brings it again.
        Thread.currentThread().interrupt();
        LOG.log(Level.FINE, inbox.name() + ": " + message.eventId() + " cut short by an interrupt");
        return Received.FAILED;
      }
      inbox.listener().consumeFailed(inbox.name());
      return rows.recordFailure(message, cause);
    }
  }

  /** The messages a transaction applies, read in it first if need be (a re-queue's is). */
  @FunctionalInterface
  interface Messages {
    List<EventEnvelope> in(Connection transaction) throws SQLException;
  }

  Received[] apply(Messages source) throws Exception {
    Decided decided =
        Transactions.inTransaction(inbox.dataSource(), c -> decideAndApply(c, source.in(c)));
    report(decided.out(), decided.tally());
    return decided.out();
  }

  /** What one transaction decided: each message's outcome, and the counts for the listener. */
  private record Decided(Received[] out, SequenceGate.Tally tally) {}

  private Decided decideAndApply(Connection c, List<EventEnvelope> messages) throws Exception {
    Received[] out = new Received[messages.size()];
    SequenceGate.Tally tally = new SequenceGate.Tally();
    if (messages.isEmpty()) {
      return new Decided(out, tally);
    }
    OffsetDateTime now = Outbox.utc(inbox.clock().instant());
    List<EventEnvelope> toApply =
        inbox.sequenceStart() == null
            ? claimAll(c, messages, now, out)
            : gate.decide(c, messages, now, out, tally);
    if (!toApply.isEmpty()) {
      inbox.handler().applyAll(c, toApply);
      failIfAborted(c);
    }
    return new Decided(out, tally);
  }

  /**
   * Throws if the handler returned normally but left the transaction aborted: it caught an SQL
   * error (a constraint violation, a lock timeout) and went on, and PostgreSQL then refuses every
   * statement; its commit is a rollback, which the PostgreSQL driver reports as a successful
   * commit. Without this check the messages counted as applied (and were acknowledged) while
   * neither the handler's writes nor the inbox rows were kept. So it is the handler's failure, like
   * an exception it let through: rolled back, the attempt counted, nothing marked.
   */
  private static void failIfAborted(Connection c) throws SQLException {
    if (!aborted(c)) {
      return;
    }
    throw new IllegalStateException(
        "the handler returned but left the transaction aborted: it caught an SQL error and went"
            + " on. Let the error through, or roll back to a savepoint of its own before going on");
  }

  /**
   * Whether {@code c}'s transaction is aborted: a statement PostgreSQL refuses in an aborted
   * transaction, with SQLSTATE {@value #IN_FAILED_TRANSACTION}. Plain JDBC, one short round trip
   * after the handler: the driver's own transaction state is not public API.
   */
  private static boolean aborted(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("select 1");
      return false;
    } catch (SQLException e) {
      if (IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
        return true;
      }
      throw e;
    }
  }

  /** Claims every message; answers those to apply, and fills in the others' outcomes. */
  private List<EventEnvelope> claimAll(
      Connection c, List<EventEnvelope> messages, OffsetDateTime now, Received[] out)
      throws SQLException {
    Set<UUID> claimed = rows.claim(c, messages, now);
    Map<UUID, String> statuses = Map.of();
    if (claimed.size() < messages.size()) {
      List<UUID> others = new ArrayList<>();
      for (EventEnvelope m : messages) {
        if (!claimed.contains(m.eventId())) {
          others.add(m.eventId());
        }
      }
      statuses = rows.statuses(c, others);
    }
    List<EventEnvelope> toApply = new ArrayList<>(claimed.size());
    for (int i = 0; i < messages.size(); i++) {
      EventEnvelope m = messages.get(i);
      if (claimed.contains(m.eventId())) {
        toApply.add(m);
        out[i] = Received.APPLIED;
      } else {
        out[i] = rows.settled(m.eventId(), statuses.get(m.eventId()));
      }
    }
    return toApply;
  }

  private void report(Received[] outcomes, SequenceGate.Tally tally) {
    int applied = 0;
    int duplicates = 0;
    for (Received r : outcomes) {
      if (r == Received.APPLIED) {
        applied++;
      } else if (r == Received.DUPLICATE) {
        duplicates++;
      }
    }
    if (applied > 0) {
      inbox.listener().consumed(inbox.name(), applied);
    }
    if (duplicates > tally.stale) {
      inbox.listener().duplicatesSkipped(inbox.name(), duplicates - tally.stale);
    }
    if (tally.stale > 0) {
      inbox.listener().staleSkipped(inbox.name(), tally.stale);
    }
    if (tally.held > 0) {
      inbox.listener().messagesHeld(inbox.name(), tally.held);
    }
  }
}
