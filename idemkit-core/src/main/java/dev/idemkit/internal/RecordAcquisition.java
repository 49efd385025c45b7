package dev.idemkit.internal;

import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.Takeover;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Claiming a key for a request: the claim, and what an existing record means for the request by the
 * contract's table (an answer, a mismatch, "in progress", or a takeover that makes the request its
 * owner). Every change of owner is one conditional write in the store.
 */
final class RecordAcquisition {

  /**
   * How often one request re-reads after losing a race for the same record. Each lost race means
   * another request changed the record in between, so a handful is plenty.
   */
  private static final int MAX_RACES = 16;

  /**
   * The least Retry-After of a retry whose record awaits an operator: only an operator's resolution
   * settles it, which takes minutes or hours, so a client asking every few seconds only adds load
   * (the same wait as a live-records quota refusal that escalated records alone cause).
   */
  static final Duration AWAITING_OPERATOR_RETRY_AFTER = Duration.ofSeconds(60);

  private final IdempotencyStore store;
  private final IdempotencyConfig config;
  private final IdempotencyListener listener;
  private final RecentDurations durations;

  RecordAcquisition(
      IdempotencyStore store,
      IdempotencyConfig config,
      IdempotencyListener listener,
      RecentDurations durations) {
    this.store = store;
    this.config = config;
    this.listener = listener;
    this.durations = durations;
  }

  /** Either an answer for the caller, or a claim that makes the caller the owner. */
  record Acquired(Outcome answer, Claim claim) {
    static Acquired answer(Outcome outcome) {
      return new Acquired(outcome, null);
    }

    static Acquired owned(Claim claim) {
      return new Acquired(null, claim);
    }
  }

  /**
   * {@link IdempotencyEngine#executeExisting}: the key has no record that answers, and the claim's
   * transaction is rolled back so that none is made. Thrown and caught inside the engine; no stack
   * trace.
   */
  static final class NoRecord extends RuntimeException {
    static final NoRecord INSTANCE = new NoRecord();

    private NoRecord() {
      super("no record answers for the key", null, false, false);
    }
  }

  /**
   * Decides, by the contract's table, what the existing record means for this request. Every change
   * of owner is one conditional write in the store; losing it means someone else changed the
   * record, so the decision is taken again on what is there now.
   *
   * <p>Without {@code mayMakeRecord} ({@link IdempotencyEngine#executeExisting}) a key whose claim
   * inserted a new record, or that found only an expired one, throws {@link NoRecord}: the caller's
   * transaction rolls the insert back. The claim is still the insert, not a read: a concurrent
   * claim of the key not yet committed (a local operation runs in its claim's transaction) makes it
   * wait for that transaction's end, as {@link IdempotencyEngine#execute} waits, so a record being
   * made is found, never taken for none.
   */
  Acquired acquire(StoreTransaction tx, IdempotentRequest request, boolean mayMakeRecord) {
    ScopedKey id = request.id();
    for (int race = 0; race < MAX_RACES; race++) {
      ClaimAttempt attempt = store.claim(tx, NewRecord.of(request), config.lease());
      if (attempt instanceof ClaimAttempt.Inserted inserted) {
        if (!mayMakeRecord) {
          throw NoRecord.INSTANCE;
        }
        return Acquired.owned(Claim.fresh(inserted.record()));
      }
      Optional<Snapshot> seen =
          attempt instanceof ClaimAttempt.Found found
              ? Optional.of(found.snapshot())
              : store.read(tx, id);
      if (seen.isEmpty()) {
        continue;
      }
      Snapshot snapshot = seen.get();
      IdempotencyRecord record = snapshot.record();
      Instant now = snapshot.now();
      if (record.isExpiredAt(now)) {
        if (!mayMakeRecord) {
          throw NoRecord.INSTANCE;
        }
        Optional<IdempotencyRecord> replaced =
            takeOver(tx, snapshot, Takeover.REPLACE_EXPIRED, request);
        if (replaced.isPresent()) {
          listener.onExpiredRetry(id);
          return Acquired.owned(Claim.fresh(replaced.get()));
        }
        continue;
      }
      // A finished record answers as it does on the read-first path; any other record refuses a
      // different request before its state is looked at.
      if (record.state().isReplayable()) {
        return Acquired.answer(
            finishedAnswer(record, request)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            id + " is " + record.state() + " but has no response")));
      }
      if (!request.sameCommandAs(record.fingerprint())) {
        return Acquired.answer(new Outcome.Mismatch());
      }
      Takeover kind;
      switch (record.state()) {
        case FAILED_RETRYABLE -> kind = Takeover.RECLAIM_RETRYABLE;
        case IN_PROGRESS -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(
                new Outcome.InProgress(
                    durations.retryAfter(
                        id.operation(),
                        Duration.between(now, record.lockedUntil()),
                        Duration.between(record.updatedAt(), now))));
          }
          kind = Takeover.RESUME_ABANDONED;
        }
        case UNKNOWN_REQUIRES_RECOVERY -> {
          if (!record.isLeaseExpiredAt(now)) {
            return Acquired.answer(
                record.awaitsOperator()
                    ? awaitingOperator(retryAfter(record, now))
                    : new Outcome.OutcomePending(retryAfter(record, now)));
          }
          kind = Takeover.RECOVER_UNKNOWN;
        }
        default -> throw new IllegalStateException("Unknown state " + record.state());
      }
      Optional<IdempotencyRecord> mine = takeOver(tx, snapshot, kind, request);
      if (mine.isPresent()) {
        return Acquired.owned(Claim.resumed(mine.get()));
      }
    }
    throw new IllegalStateException(
        "Gave up on " + id + " after losing " + MAX_RACES + " races for its record");
  }

  private Optional<IdempotencyRecord> takeOver(
      StoreTransaction tx, Snapshot seen, Takeover kind, IdempotentRequest request) {
    Optional<IdempotencyRecord> taken =
        store.takeOver(tx, seen, kind, NewRecord.of(request), config.lease());
    taken.ifPresent(r -> listener.onTakeover(request.id(), kind));
    return taken;
  }

  /**
   * The answer for a record automatic recovery gave up on: it waits for an operator, so the retry
   * is told to wait at least {@link #AWAITING_OPERATOR_RETRY_AFTER}.
   */
  static Outcome.OutcomePending awaitingOperator(Duration untilNextAttempt) {
    return new Outcome.OutcomePending(
        untilNextAttempt.compareTo(AWAITING_OPERATOR_RETRY_AFTER) > 0
            ? untilNextAttempt
            : AWAITING_OPERATOR_RETRY_AFTER,
        Outcome.OutcomePending.Awaiting.OPERATOR);
  }

  /** Whole seconds until the lease runs out, at least one. */
  private static Duration retryAfter(IdempotencyRecord record, Instant now) {
    Duration left = Duration.between(now, record.lockedUntil());
    long seconds = Math.max(1, (left.toMillis() + 999) / 1000);
    return Duration.ofSeconds(seconds);
  }

  /**
   * What an unexpired finished record ({@link RecordState#isReplayable()}) answers this request: a
   * mismatch when the request is not the one recorded, else a replay of the stored response; empty
   * when the record has no stored response.
   */
  static Optional<Outcome> finishedAnswer(IdempotencyRecord record, IdempotentRequest request) {
    if (!request.sameCommandAs(record.fingerprint())) {
      return Optional.of(new Outcome.Mismatch());
    }
    return record
        .storedResponse()
        .<Outcome>map(response -> new Outcome.Replayed(response, record.state()));
  }
}
