package dev.idemkit.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How often each operation's recent requests were retries of a finished operation, as a moving
 * average. When most are, the engine first reads the record with one auto-commit read and answers
 * from it, saving the transaction a replay otherwise costs; when few are, that read would be a
 * wasted round trip for every first execution, so it is skipped. Either way the answer is the same:
 * a finished record cannot change while it lives, and anything else goes the usual way.
 */
final class ReplayRates {

  /** The average in thousandths; each request moves it by 1/16 of the way. */
  private static final int SCALE = 1000;

  private static final int SHIFT = 4;

  /** Above this share of replays the read first saves more round trips than it costs. */
  private static final int READ_FIRST_ABOVE = SCALE / 2;

  /** Operation names are few; a caller inventing names cannot grow this without bound. */
  private static final int MAX_OPERATIONS = 1024;

  private final ConcurrentHashMap<String, AtomicInteger> rates = new ConcurrentHashMap<>();

  /** Whether reading first is likely to answer {@code operation}'s next request. */
  boolean readFirst(String operation) {
    AtomicInteger rate = rates.get(operation);
    return rate != null && rate.get() > READ_FIRST_ABOVE;
  }

  void record(String operation, boolean replayed) {
    AtomicInteger rate = rates.get(operation);
    if (rate == null) {
      if (rates.size() >= MAX_OPERATIONS) {
        return;
      }
      rate = rates.computeIfAbsent(operation, k -> new AtomicInteger());
    }
    int target = replayed ? SCALE : 0;
    rate.updateAndGet(r -> r + ((target - r) >> SHIFT));
  }
}
