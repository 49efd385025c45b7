package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperationResult;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.RecordCleanup;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.testing.InMemoryIdempotencyStore;
import dev.idemkit.testing.MutableClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class IdempotencyRecoveryWorkerTest {

  private static final Duration LEASE = Duration.ofSeconds(30);

  private final MutableClock clock = MutableClock.startingNow();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(clock);
  private final Idempotency idempotency =
      Idempotency.create(store, IdempotencyConfig.builder().lease(LEASE).build());

  /** The recoverer of {@code create_payment} that resumes a record as {@code resume} says. */
  private static RecoverableOperation createPayment(
      java.util.function.Function<IdempotencyRecord, PhasedOperation<?>> resume) {
    return new RecoverableOperation() {
      @Override
      public String operation() {
        return "create_payment";
      }

      @Override
      public PhasedOperation<?> resume(IdempotencyRecord record) {
        return resume.apply(record);
      }
    };
  }

  /** A claim whose owner died at once: IN_PROGRESS, lease running out. */
  private void abandon(ScopedKey id) throws Exception {
    ClaimAttempt claimed =
        store.inTransaction(
            tx ->
                store.claim(
                    tx,
                    new NewRecord(id, Fingerprint.of(Map.of("n", "1")), Duration.ofHours(24)),
                    LEASE));
    assertThat(claimed).isInstanceOf(ClaimAttempt.Inserted.class);
  }

  @Test
  void recordsOfAnOperationWithNoRecovererDoNotStarveTheOthers() throws Exception {
    for (int i = 0; i < 10; i++) {
      abandon(ScopedKey.of("tenant-a", "nobody_resumes_this", "k-" + i));
    }
    clock.advance(Duration.ofSeconds(1));
    ScopedKey resumable = ScopedKey.of("tenant-a", "create_payment", "k-mine");
    abandon(resumable);
    clock.advance(LEASE.plusSeconds(1));
    RecoverableOperation payments =
        createPayment(
            record ->
                PhasedOperation.builder()
                    .complete(
                        (ctx, d) ->
                            OperationResult.success(
                                StoredResponse.of(201, Map.of(), "{}".getBytes()))));
    IdempotencyRecoveryWorker worker =
        new IdempotencyRecoveryWorker(
            idempotency, store, List.of(payments), Duration.ofSeconds(1), 3);

    IdempotencyRecoveryWorker.Pass pass = worker.recoverOnce();

    assertThat(pass.recovered()).isEqualTo(1);
    assertThat(store.find(resumable).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void aRecordWhoseRecoveryDataCannotBeReadIsSpacedOutThenLeftToAnOperator() throws Exception {
    ScopedKey id = ScopedKey.of("tenant-shredded", "create_payment", "k-unreadable");
    ClaimAttempt claimed =
        store.inTransaction(
            tx ->
                store.claim(
                    tx,
                    new NewRecord(id, Fingerprint.of(Map.of("n", "1")), Duration.ofHours(24)),
                    LEASE));
    IdempotencyRecord record = ((ClaimAttempt.Inserted) claimed).record();
    Ownership owner = new Ownership(id, record.fencingToken(), record.lockedUntil());
    store.inTransaction(
        tx -> {
          store.suspend(tx, owner, RecordState.UNKNOWN_REQUIRES_RECOVERY);
          return null;
        });
    RecoverableOperation unreadable =
        createPayment(
            r -> {
              throw new RecordUnreadableException(
                  r.id(), RecordUnreadableException.Reason.KEY_DESTROYED, "key destroyed", null);
            });
    IdempotencyRecoveryWorker worker = spacedOutWorker(unreadable);

    assertThat(worker.recoverOnce().failed()).isEqualTo(1);
    // Not tried again on every pass: the next attempt waits for the back-off.
    assertThat(worker.recoverOnce().found()).isZero();
    clock.advance(Duration.ofSeconds(11));
    assertThat(worker.recoverOnce().found()).isEqualTo(1);
    assertThat(store.find(id).orElseThrow().state())
        .isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
  }

  /**
   * The provider charged, but the step after the call fails every time (a bug, a broken
   * constraint): the result is never recorded, so each attempt asks the provider again. Those
   * attempts follow the recovery schedule like an unknown outcome's (not one lookup per pass for
   * ever) and the last allowed one leaves the record to an operator; nothing is charged twice.
   */
  @Test
  void aStepThatFailsAfterTheCallEveryTimeIsSpacedOutThenLeftToAnOperator() throws Exception {
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "k-broken-step");
    java.util.concurrent.atomic.AtomicInteger charges =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger lookups =
        new java.util.concurrent.atomic.AtomicInteger();
    PhasedOperation<Map<String, String>> brokenStep =
        PhasedOperation.builder()
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, d) -> {
                              charges.incrementAndGet();
                              return dev.idemkit.CallResult.applied(d);
                            })
                        .lookup(
                            (ctx, d) -> {
                              lookups.incrementAndGet();
                              return dev.idemkit.CallResult.applied(d);
                            })
                        .afterCall(
                            (ctx, d) -> {
                              throw new IllegalStateException("ledger constraint broken");
                            }))
            .complete(
                (ctx, d) ->
                    OperationResult.success(StoredResponse.of(201, Map.of(), "{}".getBytes())));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                idempotency.execute(
                    new dev.idemkit.IdempotentRequest(
                        id, Fingerprint.of(Map.of("n", "1")), Duration.ofHours(24)),
                    brokenStep))
        .isInstanceOf(dev.idemkit.OperationFailedException.class);
    IdempotencyRecord left = store.find(id).orElseThrow();
    assertThat(left.state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
    assertThat(left.pendingExternal()).isEqualTo("CHARGED");
    assertThat(left.recoveryAttempts()).isEqualTo(1);

    IdempotencyRecoveryWorker worker = spacedOutWorker(createPayment(r -> brokenStep));

    assertThat(worker.recoverOnce().failed()).isEqualTo(1); // attempt 2, due at once
    assertThat(worker.recoverOnce().found()).as("waits for the back-off").isZero();
    clock.advance(Duration.ofSeconds(11));
    assertThat(worker.recoverOnce().failed()).isEqualTo(1); // attempt 3, the last
    assertThat(store.findEscalated(10)).extracting(IdempotencyRecord::id).containsExactly(id);
    clock.advance(Duration.ofDays(1));
    assertThat(worker.recoverOnce().found()).as("left to an operator").isZero();
    assertThat(lookups).as("one lookup per attempt after the first").hasValue(2);
    assertThat(charges).as("charged once").hasValue(1);
  }

  /**
   * The charge is recorded and the receipt's call did nothing, so the record waits in progress to
   * go on from the charge; then the local step before the receipt's call fails every time. The
   * worker's attempts are spaced out and the last one leaves the record to an operator: it was
   * tried again on every pass, for ever.
   */
  @Test
  void aLocalPhaseThatFailsAfterAnEffectEveryTimeIsSpacedOutThenLeftToAnOperator()
      throws Exception {
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "k-broken-local-phase");
    java.util.concurrent.atomic.AtomicInteger charges =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger steps =
        new java.util.concurrent.atomic.AtomicInteger();
    PhasedOperation<Map<String, String>> brokenPhase =
        PhasedOperation.builder()
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, d) -> {
                              charges.incrementAndGet();
                              return dev.idemkit.CallResult.applied(d);
                            })
                        .lookup(
                            (ctx, d) ->
                                charges.get() == 0
                                    ? dev.idemkit.CallResult.notApplied("no charge under this key")
                                    : dev.idemkit.CallResult.applied(d)))
            .external(
                "RECEIPT_SENT",
                call ->
                    call.beforeCall(
                            (ctx, d) -> {
                              if (steps.incrementAndGet() > 1) {
                                throw new IllegalStateException("receipt constraint broken");
                              }
                              return dev.idemkit.Step.next(d);
                            })
                        .call((ctx, d) -> dev.idemkit.CallResult.notApplied("mail service busy"))
                        .farSideDeduplicatesByKey())
            .complete(
                (ctx, d) ->
                    OperationResult.success(StoredResponse.of(201, Map.of(), "{}".getBytes())));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                idempotency.execute(
                    new dev.idemkit.IdempotentRequest(
                        id, Fingerprint.of(Map.of("n", "1")), Duration.ofHours(24)),
                    brokenPhase))
        .isInstanceOf(dev.idemkit.OperationFailedException.class);
    assertThat(store.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);

    IdempotencyRecoveryWorker worker = spacedOutWorker(createPayment(r -> brokenPhase));

    assertThat(worker.recoverOnce().failed()).isEqualTo(1);
    IdempotencyRecord left = store.find(id).orElseThrow();
    assertThat(left.state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
    assertThat(left.recoveryPoint()).isEqualTo("CHARGED");
    assertThat(left.recoveryAttempts()).isEqualTo(1);
    assertThat(worker.recoverOnce().found()).as("waits for the back-off").isZero();
    clock.advance(Duration.ofSeconds(11));
    assertThat(worker.recoverOnce().failed()).isEqualTo(1);
    assertThat(worker.recoverOnce().found()).as("waits for the back-off").isZero();
    clock.advance(Duration.ofSeconds(11));
    assertThat(worker.recoverOnce().failed()).isEqualTo(1); // attempt 3, the last
    assertThat(store.findEscalated(10)).extracting(IdempotencyRecord::id).containsExactly(id);
    clock.advance(Duration.ofDays(1));
    assertThat(worker.recoverOnce().found()).as("left to an operator").isZero();
    assertThat(steps).as("the first run, then one per attempt").hasValue(4);
    assertThat(charges).as("charged once").hasValue(1);
  }

  /** A worker whose attempts are 10 s apart at first, three at most. */
  private IdempotencyRecoveryWorker spacedOutWorker(RecoverableOperation operation) {
    IdemkitProperties.Recovery backoff = new IdemkitProperties.Recovery();
    backoff.setBackoff(Duration.ofSeconds(10));
    backoff.setMaxAttempts(3);
    return new IdempotencyRecoveryWorker(
        idempotency,
        store,
        List.of(operation),
        Duration.ofSeconds(1),
        10,
        backoff,
        IdempotencyListener.NONE);
  }

  /**
   * The workers look up the store capabilities they need when they are made: a store without them
   * is refused at start-up, with the missing interface named, not at the first pass or run.
   */
  @Test
  void workersRefuseAStoreLackingTheCapabilityTheyNeedWhenTheyAreMade() {
    IdempotencyStore bare =
        new ForwardingIdempotencyStore(store) {
          @Override
          public <T> Optional<T> capability(Class<T> type) {
            return Optional.empty();
          }
        };
    IdemkitProperties.Recovery backoff = new IdemkitProperties.Recovery();
    RecoverableOperation operation = createPayment(r -> null);

    assertThatThrownBy(
            () ->
                new IdempotencyRecoveryWorker(
                    idempotency,
                    bare,
                    List.of(operation),
                    Duration.ofSeconds(1),
                    10,
                    backoff,
                    IdempotencyListener.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "lacks the store capability " + RecoveryAdministration.class.getName())
        .hasMessageContaining("idemkit.recovery");
    assertThatThrownBy(
            () ->
                new IdempotencyCleanupWorker(
                    bare, IdempotencyListener.NONE, new IdemkitProperties.Cleanup()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lacks the store capability " + RecordCleanup.class.getName())
        .hasMessageContaining("idemkit.cleanup.enabled=false");
    assertThat(
            new IdempotencyRecoveryWorker(
                    idempotency, bare, List.of(operation), Duration.ofSeconds(1), 10)
                .recoverOnce()
                .found())
        .as("without a backoff, recovery needs no capability")
        .isZero();
  }
}
