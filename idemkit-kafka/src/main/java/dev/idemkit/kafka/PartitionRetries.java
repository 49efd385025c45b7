package dev.idemkit.kafka;

import dev.idemkit.support.Backoff;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

/**
 * A {@link KafkaEventConsumer}'s partitions that must be read again: one whose message failed is
 * sent back to it and paused for a {@link Backoff} that grows with its failures in a row; the
 * partitions of a round that failed after its poll are sent back to the round's first offsets
 * before the next poll. Used on the polling thread only (the rebalance listener runs there too,
 * inside a poll).
 */
final class PartitionRetries {

  private final Clock clock;
  private final Backoff backoff;
  private final Map<TopicPartition, Integer> failuresInARow = new ConcurrentHashMap<>();
  private final Map<TopicPartition, Instant> pausedUntil = new ConcurrentHashMap<>();
  private final Map<TopicPartition, Long> rewindTo = new HashMap<>();

  PartitionRetries(Clock clock, Backoff backoff) {
    this.clock = clock;
    this.backoff = backoff;
  }

  /** The partition's records were all settled: its failures in a row end. */
  void settled(TopicPartition p) {
    failuresInARow.remove(p);
  }

  /**
   * The message at {@code offset} failed: everything before it is done; it and what follows are
   * read again once the partition's backoff is over.
   */
  void retryFrom(Consumer<String, String> c, TopicPartition p, long offset) {
    c.seek(p, offset);
    int failures = failuresInARow.merge(p, 1, Integer::sum);
    pausedUntil.put(p, clock.instant().plus(backoff.delay(failures)));
    c.pause(List.of(p));
  }

  /**
   * A round failed after its poll (the inbox's bookkeeping, a seek, a pause, the commit, …): the
   * client's position is past records whose outcome may not allow their offsets to be committed
   * (failed, or not received at all), and the next round's commit would move past them. So every
   * partition of the polled records goes back to the batch's first offset there: by then every
   * record before it was settled (committed, or its partition sent back to it). The inbox skips
   * what it already has when they come again.
   */
  void rewindLater(ConsumerRecords<String, String> records) {
    for (TopicPartition p : records.partitions()) {
      rewindTo.merge(p, records.records(p).get(0).offset(), Math::min);
    }
  }

  /**
   * Seeks the partitions {@link #rewindLater} noted, before the next poll: a round never polls (so
   * never commits) while one is pending, and a seek that throws is tried again next round. A
   * partition no longer assigned is dropped: its next owner starts from its committed offset.
   */
  void rewind(Consumer<String, String> c) {
    if (rewindTo.isEmpty()) {
      return;
    }
    Set<TopicPartition> assigned = c.assignment();
    for (var it = rewindTo.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<TopicPartition, Long> e = it.next();
      if (assigned.contains(e.getKey())) {
        c.seek(e.getKey(), e.getValue());
      }
      it.remove();
    }
  }

  /** Resumes the paused partitions whose backoff is over (those still assigned). */
  void resumeDue(Consumer<String, String> c) {
    if (pausedUntil.isEmpty()) {
      return;
    }
    Instant now = clock.instant();
    Set<TopicPartition> due = new LinkedHashSet<>();
    pausedUntil.forEach(
        (p, until) -> {
          if (!now.isBefore(until)) {
            due.add(p);
          }
        });
    if (!due.isEmpty()) {
      due.retainAll(c.assignment());
      c.resume(due);
      pausedUntil.keySet().removeAll(due);
      pausedUntil.keySet().retainAll(c.assignment());
    }
  }

  /**
   * Offsets are committed after every batch, so a revoked partition has nothing pending; what is
   * forgotten is its pause and backoff (the next owner starts afresh from the committed offset).
   */
  ConsumerRebalanceListener rebalanceListener() {
    return new Rebalance();
  }

  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      partitions.forEach(
          p -> {
            pausedUntil.remove(p);
            failuresInARow.remove(p);
          });
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
  }
}
