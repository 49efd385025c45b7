package dev.idemkit.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Outcome;
import dev.idemkit.PhaseData;
import dev.idemkit.PhasedOperation;
import dev.idemkit.Quotas;
import dev.idemkit.RecordState;
import dev.idemkit.RecoverySchedule;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.RecordCleanup;
import dev.idemkit.spi.RecordExistsException;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.TransactionWork;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The contract every {@link IdempotencyStore} passes, through the engine, as a user sees it. A
 * store test extends this class and supplies a fresh store on a {@link Clock} the suite moves by
 * hand.
 *
 * <p>Business effects are counted in a {@link Ledger} written inside the operation's transaction,
 * so "exactly one execution" is asserted on committed rows, not on calls.
 *
 * <p>Why one class of this length: it is the one abstract suite every store extends, as
 * Micrometer's {@code MeterRegistryCompatibilityKit} is, so that a store test stays one subclass
 * and every store runs every case. Its cases share the store, clock, ledger and engine set up here;
 * the optional capabilities are {@code @Nested} suites ({@code RecoveryAdministrationContract},
 * {@code RecordCleanupContract}, {@code QuotaSyncContract}) that run only where the store has them.
 */
public abstract class IdempotencyStoreContract {

  /** Where the suite's operations write their business effect, in the operation's transaction. */
  public interface Ledger {
    void write(StoreTransaction tx, String entry) throws Exception;

    /** Committed entries equal to {@code entry}. */
    long count(String entry) throws Exception;
  }

  /** Stands for a process dying: not an {@link Exception}, so nothing in the engine handles it. */
  public static final class SimulatedCrash extends Error {
    public SimulatedCrash() {
      super("simulated crash", null, false, false);
    }
  }

  protected static final Duration LEASE = Duration.ofSeconds(30);
  protected static final Duration TTL = Duration.ofHours(24);
  private static final Duration MINUTE = Duration.ofMinutes(1);

  protected MutableClock clock;
  protected IdempotencyStore store;
  protected Ledger ledger;
  protected RecordingListener listener;
  protected Idempotency idempotency;

  /** The engine's monotonic clock, in nanoseconds; moved by hand like {@link #clock}. */
  protected final AtomicLong ticker = new AtomicLong();

  /** Transactions the engine committed through the store. */
  protected final AtomicInteger commits = new AtomicInteger();

  /** Reads of a record outside any transaction ({@link IdempotencyStore#peek}). */
  protected final AtomicInteger peeks = new AtomicInteger();

  private String tenant;
  private ExecutorService pool;

  /** A store on {@code clock}; records of earlier tests may remain, each test uses new tenants. */
  protected abstract IdempotencyStore createStore(Clock clock);

  protected abstract Ledger createLedger();

  @BeforeEach
  void setUpContract() {
    clock = MutableClock.startingNow();
    store = createStore(clock);
    ledger = createLedger();
    listener = new RecordingListener();
    IdempotencyStore counted =
        new ForwardingIdempotencyStore(store) {
          @Override
          public <T> T inTransaction(TransactionWork<T> work) throws Exception {
            T value = super.inTransaction(work);
            commits.incrementAndGet();
            return value;
          }

          @Override
          public Optional<Snapshot> peek(ScopedKey id) {
            peeks.incrementAndGet();
            return delegate().peek(id);
          }
        };
    idempotency =
        Idempotency.create(
            counted,
            IdempotencyConfig.builder()
                .lease(LEASE)
                .defaultTtl(TTL)
                .listener(listener)
                .ticker(ticker::get)
                .build());
    tenant = "t-" + UUID.randomUUID();
    pool = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDownContract() {
    pool.shutdownNow();
  }

  // ---- helpers -----------------------------------------------------------------------------

  protected ScopedKey key(String key) {
    return ScopedKey.of(tenant, "create_payment", key);
  }

  protected static Fingerprint command(String amount) {
    return Fingerprint.of(Map.of("amount", amount, "currency", "EUR"));
  }

  protected static StoredResponse response(int status, String body) {
    return StoredResponse.of(
        status, Map.of("Content-Type", "application/json"), body.getBytes(StandardCharsets.UTF_8));
  }

  private static String entry(ScopedKey id, String what) {
    return id + "#" + what;
  }

  /** A single-transaction operation that writes one ledger entry and answers 201. */
  protected LocalOperation pay(ScopedKey id, String body) {
    return ctx -> {
      ledger.write(ctx.transaction(), entry(id, "payment"));
      return OperationResult.success(response(201, body));
    };
  }

  /** A local step that writes the ledger entry {@code what} for {@code id} and goes on. */
  private <D> PhasedOperation.LocalStep<D> writes(ScopedKey id, String what) {
    return (ctx, d) -> {
      ledger.write(ctx.transaction(), entry(id, what));
      return Step.next(d);
    };
  }

  /** A local step that writes the payment of {@code id} and goes on with its id. */
  private PhasedOperation.LocalStep<Payment> createsPayment(ScopedKey id) {
    return (ctx, p) -> {
      ledger.write(ctx.transaction(), entry(id, "payment"));
      return Step.next(new Payment("p-" + id.key().value(), null));
    };
  }

  /** A completion that answers 201 with {@code body}. */
  private static <D> PhasedOperation.Completion<D> answers(String body) {
    return (ctx, d) -> OperationResult.success(response(201, body));
  }

  /** A completion that answers 201 with the payment's charge id. */
  private static PhasedOperation.Completion<Payment> answersWithTheCharge() {
    return (ctx, p) ->
        OperationResult.success(response(201, "{\"charge\":\"" + p.chargeId() + "\"}"));
  }

  /** The body of the answer an outcome carries. */
  private static String body(Outcome outcome) {
    return new String(outcome.storedResponse().orElseThrow().body(), StandardCharsets.UTF_8);
  }

  protected Outcome execute(ScopedKey id, Fingerprint fp, dev.idemkit.Operation op) {
    return idempotency.execute(new IdempotentRequest(id, fp, TTL), op);
  }

  protected Outcome execute(ScopedKey id, Fingerprint fp, LocalOperation op) {
    return execute(id, fp, (dev.idemkit.Operation) op);
  }

  protected long payments(ScopedKey id) throws Exception {
    return ledger.count(entry(id, "payment"));
  }

  protected IdempotencyRecord record(ScopedKey id) {
    return store.find(id).orElseThrow(() -> new AssertionError("no record for " + id));
  }

  /** Claims {@code id} through the store and walks away, like a process that died right after. */
  protected Ownership abandonedClaim(ScopedKey id, Fingerprint fp) throws Exception {
    return store.inTransaction(
        tx -> {
          ClaimAttempt a = store.claim(tx, new NewRecord(id, fp, TTL), LEASE);
          assertThat(a).isInstanceOf(ClaimAttempt.Inserted.class);
          return Ownership.of(((ClaimAttempt.Inserted) a).record());
        });
  }

  /** Leaves {@code id} in {@code state} the way real operations do. */
  protected void leaveIn(RecordState state, ScopedKey id, Fingerprint fp) throws Exception {
    switch (state) {
      case COMPLETED -> execute(id, fp, pay(id, "{\"ok\":true}"));
      case FAILED_REPLAYABLE ->
          execute(id, fp, ctx -> OperationResult.rejected(response(402, "{\"declined\":true}")));
      case FAILED_RETRYABLE ->
          assertThatThrownBy(
                  () ->
                      execute(
                          id,
                          fp,
                          PhasedOperation.builder()
                              .external(
                                  "CHARGED",
                                  call ->
                                      call.call(
                                              (ctx, d) ->
                                                  CallResult.notApplied("503 before charging"))
                                          .farSideDeduplicatesByKey())
                              .complete(answers("{}"))))
              .isInstanceOf(OperationFailedException.class);
      case IN_PROGRESS -> abandonedClaim(id, fp);
      case UNKNOWN_REQUIRES_RECOVERY ->
          assertThat(execute(id, fp, new Provider().payment(id, () -> {}, answerLost())))
              .isInstanceOf(Outcome.OutcomePending.class);
    }
    assertThat(record(id).state()).isEqualTo(state);
  }

  private <T> List<T> race(int threads, java.util.concurrent.Callable<T> task) throws Exception {
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<T>> futures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      futures.add(
          pool.submit(
              () -> {
                ready.countDown();
                go.await();
                return task.call();
              }));
    }
    assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
    go.countDown();
    List<T> results = new ArrayList<>();
    for (Future<T> f : futures) {
      results.add(f.get(120, TimeUnit.SECONDS));
    }
    return results;
  }

  // ---- the cases ---------------------------------------------------------------------------

  @Test
  void completedRequestIsReplayedWithTheSameAnswer() throws Exception {
    ScopedKey id = key("k-replay");
    Outcome first = execute(id, command("10.00"), pay(id, "{\"paymentId\":\"p1\"}"));
    Outcome second = execute(id, command("10.00"), pay(id, "{\"paymentId\":\"p2\"}"));

    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(second).isInstanceOf(Outcome.Replayed.class);
    Outcome.Replayed replayed = (Outcome.Replayed) second;
    assertThat(replayed.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(replayed.response()).isEqualTo(((Outcome.Executed) first).response());
    assertThat(new String(replayed.response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"paymentId\":\"p1\"}");
    assertThat(replayed.response().headers()).containsEntry("Content-Type", "application/json");
    assertThat(payments(id)).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(RecordState.class)
  void aDifferentCommandUnderTheSameKeyIsAMismatchInEveryState(RecordState state) throws Exception {
    ScopedKey id = key("k-mismatch-" + state);
    leaveIn(state, id, command("10.00"));
    IdempotencyRecord before = record(id);
    long paymentsBefore = payments(id);

    Outcome outcome = execute(id, command("99.00"), pay(id, "{}"));

    assertThat(outcome).isInstanceOf(Outcome.Mismatch.class);
    IdempotencyRecord after = record(id);
    assertThat(after.state()).isEqualTo(before.state());
    assertThat(after.fingerprint()).isEqualTo(command("10.00"));
    assertThat(after.fencingToken()).isEqualTo(before.fencingToken());
    assertThat(payments(id)).isEqualTo(paymentsBefore);
    assertThat(listener.count("outcome.Mismatch")).isEqualTo(1);
  }

  /**
   * 64 identical requests released together, each on its own connection: with the record written
   * last (the default) every one runs the operation and all but one roll back at their insert of
   * the record; claiming first, all but one wait on the claim. Either way one execution commits.
   */
  @ParameterizedTest(name = "claiming first: {0}")
  @ValueSource(booleans = {false, true})
  void concurrentIdenticalRequestsExecuteOnce(boolean claimingFirst) throws Exception {
    ScopedKey id = key("k-race-" + claimingFirst);
    int threads = 64;
    LocalOperation pays =
        ctx -> {
          ledger.write(ctx.transaction(), entry(id, "payment"));
          Thread.sleep(20); // hold the transaction open while the others arrive
          return OperationResult.success(response(201, "{\"paymentId\":\"p1\"}"));
        };
    LocalOperation op = claimingFirst ? LocalOperation.claimingFirst(pays) : pays;
    List<Outcome> outcomes = race(threads, () -> execute(id, command("10.00"), op));

    assertThat(outcomes).hasSize(threads);
    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
    assertThat(outcomes)
        .allMatch(
            o ->
                o instanceof Outcome.Executed
                    || o instanceof Outcome.Replayed
                    || o instanceof Outcome.InProgress);
    assertThat(outcomes.stream().flatMap(o -> o.storedResponse().stream()).distinct()).hasSize(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
  }

  /**
   * 64 identical payments released together, each on its own connection: with the record written at
   * the call's marker (the default) every one runs the local phase and all but one roll it back at
   * their insert of the record, before any call; claiming first, all but one wait on the claim.
   * Either way the provider charges once and one payment row is kept.
   */
  @ParameterizedTest(name = "claiming first: {0}")
  @ValueSource(booleans = {false, true})
  void concurrentIdenticalPaymentsChargeOnce(boolean claimingFirst) throws Exception {
    ScopedKey id = key("k-phased-race-" + claimingFirst);
    AtomicInteger charges = new AtomicInteger();
    PhasedOperation.Builder<Payment> builder = PhasedOperation.builder(Payment.class);
    if (claimingFirst) {
      builder.claimingFirst();
    }
    PhasedOperation<Payment> payment =
        builder
            .local(
                "LOCAL_PAYMENT_CREATED",
                (ctx, p) -> {
                  ledger.write(ctx.transaction(), entry(id, "payment"));
                  Thread.sleep(20); // hold the transaction open while the others arrive
                  return Step.next(new Payment("p-1", null));
                })
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              charges.incrementAndGet();
                              Thread.sleep(20); // the provider takes a moment
                              return CallResult.applied(new Payment(p.paymentId(), "ch-1"));
                            })
                        .farSideDeduplicatesByKey())
            .complete(answersWithTheCharge());

    List<Outcome> outcomes = race(64, () -> execute(id, command("10.00"), payment));

    assertThat(charges).hasValue(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
    assertThat(outcomes)
        .allMatch(
            o ->
                o instanceof Outcome.Executed
                    || o instanceof Outcome.Replayed
                    || o instanceof Outcome.InProgress);
    assertThat(
            outcomes.stream()
                .flatMap(o -> o.storedResponse().stream())
                .map(r -> new String(r.body(), StandardCharsets.UTF_8))
                .distinct())
        .containsExactly("{\"charge\":\"ch-1\"}");
    IdempotencyRecord r = record(id);
    assertThat(r.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(r.fencingToken()).isEqualTo(1);
    assertThat(execute(id, command("10.00"), payment)).isInstanceOf(Outcome.Replayed.class);
    assertThat(charges).hasValue(1);
  }

  /**
   * A payment's first commit writes its record once, as the marker leaves it: in progress, owned
   * with the first token, at its recovery point with the call named and the phase data kept, and
   * looked after by recovery once its lease runs out. The second commit completes it.
   */
  @Test
  void aPaymentsFirstCommitInsertsItsRecordAtTheCallsMarker() throws Exception {
    ScopedKey id = key("k-marker-insert");
    List<IdempotencyRecord> seenByTheCall = new ArrayList<>();
    List<Boolean> dueAfterTheLease = new ArrayList<>();
    PhasedOperation<Payment> payment =
        PhasedOperation.builder(Payment.class)
            .local("LOCAL_PAYMENT_CREATED", createsPayment(id))
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              seenByTheCall.add(record(id));
                              clock.advance(LEASE.plusSeconds(1));
                              dueAfterTheLease.add(
                                  store.findNeedingRecovery(100).stream()
                                      .anyMatch(x -> x.id().equals(id)));
                              clock.advance(LEASE.plusSeconds(1).negated());
                              return CallResult.applied(new Payment(p.paymentId(), "ch-1"));
                            })
                        .farSideDeduplicatesByKey())
            .complete(answersWithTheCharge());
    commits.set(0);

    Outcome outcome = execute(id, command("10.00"), payment);

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(commits).hasValue(2);
    IdempotencyRecord atTheCall = seenByTheCall.get(0);
    assertThat(atTheCall.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(atTheCall.fencingToken()).isEqualTo(1);
    assertThat(atTheCall.recoveryPoint()).isEqualTo("LOCAL_PAYMENT_CREATED");
    assertThat(atTheCall.pendingExternal()).isEqualTo("CHARGED");
    assertThat(atTheCall.recoveryData()).containsEntry("paymentId", "p-" + id.key().value());
    assertThat(atTheCall.fingerprint()).isEqualTo(command("10.00"));
    assertThat(atTheCall.isLeaseExpiredAt(clock.instant())).isFalse();
    assertThat(dueAfterTheLease).containsExactly(true);
    IdempotencyRecord done = record(id);
    assertThat(done.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(done.pendingExternal()).isNull();
    assertThat(body(outcome)).isEqualTo("{\"charge\":\"ch-1\"}");
    assertThat(store.findNeedingRecovery(100)).noneMatch(x -> x.id().equals(id));
  }

  /**
   * The record of a phased operation is inserted with a plain insert: on a key that has a record
   * the insert fails, and nothing of its transaction is kept, business writes included.
   */
  @Test
  void insertingTheRecordOfAKeyThatHasOneKeepsNothingOfTheTransaction() throws Exception {
    ScopedKey id = key("k-insert-taken");
    execute(id, command("10.00"), pay(id, "{\"paymentId\":\"p1\"}"));
    ScopedKey other = key("k-insert-taken-other");

    assertThatThrownBy(
            () ->
                store.inTransaction(
                    tx -> {
                      ledger.write(tx, entry(other, "payment"));
                      store.insertInProgress(
                          tx,
                          new NewRecord(id, command("10.00"), TTL),
                          LEASE,
                          new Checkpoint(null, "CHARGED", Map.of()));
                      return null;
                    }))
        .isInstanceOf(RecordExistsException.class);

    assertThat(payments(other)).isZero();
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
  }

  /** A phased operation that ends before any call writes its record once, finished. */
  @Test
  void aPhasedOperationThatEndsBeforeItsCallWritesItsRecordOnceFinished() throws Exception {
    ScopedKey id = key("k-declined-before-call");
    AtomicInteger calls = new AtomicInteger();
    PhasedOperation<Payment> declined =
        PhasedOperation.builder(Payment.class)
            .local(
                "LOCAL_PAYMENT_CREATED",
                (ctx, p) -> {
                  ledger.write(ctx.transaction(), entry(id, "payment"));
                  return Step.answer(
                      OperationResult.rejected(response(402, "{\"declined\":true}")));
                })
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              calls.incrementAndGet();
                              return CallResult.applied(p);
                            })
                        .farSideDeduplicatesByKey())
            .complete(answersWithTheCharge());
    commits.set(0);

    Outcome outcome = execute(id, command("10.00"), declined);

    assertThat(outcome).isInstanceOf(Outcome.Rejected.class);
    assertThat(commits).hasValue(1);
    assertThat(calls).hasValue(0);
    assertThat(payments(id)).isEqualTo(1);
    IdempotencyRecord r = record(id);
    assertThat(r.state()).isEqualTo(RecordState.FAILED_REPLAYABLE);
    assertThat(r.pendingExternal()).isNull();
    assertThat(store.findNeedingRecovery(100)).noneMatch(x -> x.id().equals(id));
    assertThat(execute(id, command("10.00"), declined)).isInstanceOf(Outcome.Replayed.class);
    assertThat(payments(id)).isEqualTo(1);
  }

  @Test
  void aFirstExecutionWritesItsRecordOnceFinishedInOneCommit() throws Exception {
    ScopedKey id = key("k-once");
    Instant before = clock.instant();

    Outcome outcome = execute(id, command("10.00"), pay(id, "{\"paymentId\":\"p1\"}"));

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(commits).hasValue(1);
    IdempotencyRecord r = record(id);
    assertThat(r.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(r.fencingToken()).isEqualTo(1);
    assertThat(r.recoveryPoint()).isNull();
    assertThat(r.pendingExternal()).isNull();
    assertThat(r.isLeaseExpiredAt(clock.instant())).isTrue();
    assertThat(r.expiresAt()).isAfterOrEqualTo(before.plus(TTL).minusSeconds(1));
    assertThat(new String(r.response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"paymentId\":\"p1\"}");
    assertThat(payments(id)).isEqualTo(1);
    assertThat(store.findNeedingRecovery(100)).noneMatch(x -> x.id().equals(id));
  }

  @Test
  void anOperationThatFailsOnTheWritesOfItsCompletedDuplicateIsAnsweredFromTheRecord()
      throws Exception {
    ScopedKey id = key("k-business-conflict");
    Outcome first = execute(id, command("10.00"), pay(id, "{\"paymentId\":\"p1\"}"));
    LocalOperation meetsTheFirstsRow =
        ctx -> {
          ledger.write(ctx.transaction(), entry(id, "payment"));
          // What a unique violation on the business key looks like to the engine.
          throw new IllegalStateException("duplicate key value violates a business constraint");
        };

    Outcome retry = execute(id, command("10.00"), meetsTheFirstsRow);
    Outcome other = execute(id, command("99.00"), meetsTheFirstsRow);

    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(((Outcome.Replayed) retry).response())
        .isEqualTo(((Outcome.Executed) first).response());
    assertThat(other).isInstanceOf(Outcome.Mismatch.class);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(listener.count("failure.FAILED_RETRYABLE")).isZero();
  }

  @Test
  void anInProgressRecordWithALiveLeaseAnswersInProgress() throws Exception {
    ScopedKey id = key("k-busy");
    abandonedClaim(id, command("10.00"));
    clock.advance(Duration.ofSeconds(10));

    Outcome outcome = execute(id, command("10.00"), pay(id, "{}"));

    assertThat(outcome).isInstanceOf(Outcome.InProgress.class);
    assertThat(((Outcome.InProgress) outcome).retryAfter())
        .isBetween(Duration.ofSeconds(1), Duration.ofSeconds(20));
    assertThat(payments(id)).isZero();
  }

  @Test
  void anInProgressAnswerSaysWhatTheOperationUsuallyTakesNotTheWholeLease() throws Exception {
    for (int i = 0; i < 5; i++) {
      ScopedKey quick = key("k-quick-" + i);
      assertThat(execute(quick, command("10.00"), pay(quick, "{}")))
          .isInstanceOf(Outcome.Executed.class);
    }
    ScopedKey id = key("k-busy-typical");
    abandonedClaim(id, command("10.00"));

    Outcome outcome = execute(id, command("10.00"), pay(id, "{}"));

    // The lease has 30 s left; the operation usually takes well under a second.
    assertThat(((Outcome.InProgress) outcome).retryAfter()).isEqualTo(Duration.ofSeconds(1));
  }

  /**
   * An owner that has held the record longer than the operation usually takes (dead, or slow) is
   * asked again after as long as it has run, up to the lease's end: a client's retries reach a
   * takeover in a few attempts instead of using them up at one a second.
   */
  @Test
  void anOverdueOwnerIsAskedAgainAfterAsLongAsItHasRunUpToItsLease() throws Exception {
    ScopedKey id = key("k-busy-overdue");
    abandonedClaim(id, command("10.00"));
    clock.advance(Duration.ofSeconds(5));

    Outcome outcome = execute(id, command("10.00"), pay(id, "{}"));
    assertThat(((Outcome.InProgress) outcome).retryAfter()).isEqualTo(Duration.ofSeconds(5));

    clock.advance(Duration.ofSeconds(20));
    outcome = execute(id, command("10.00"), pay(id, "{}"));
    assertThat(((Outcome.InProgress) outcome).retryAfter())
        .as("what is left of the 30 s lease")
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(payments(id)).isZero();
  }

  /** Phase data of the suite's typed operations. */
  public record Payment(String paymentId, String chargeId) {}

  private PhasedOperation<Payment> twoPhases(ScopedKey id) {
    return twoPhases(id, () -> {});
  }

  /**
   * Local phase A, a charge (applied; its lookup finds it), local phase B after the charge ({@code
   * insideB} runs first in it), then the completion: two commits, one before the charge and one
   * after it.
   */
  private PhasedOperation<Payment> twoPhases(ScopedKey id, Moment insideB) {
    return PhasedOperation.builder(Payment.class)
        .local(
            "A",
            (ctx, p) -> {
              ledger.write(ctx.transaction(), entry(id, "A"));
              return Step.next(new Payment("pay_" + id.key().value(), null));
            })
        .external(
            "CHARGED",
            call ->
                call.call((ctx, p) -> CallResult.applied(new Payment(p.paymentId(), "ch_1")))
                    .lookup(
                        (ctx, p) -> CallResult.applied(new Payment(p.paymentId(), "ch_lookup"))))
        .local(
            "B",
            (ctx, p) -> {
              insideB.run();
              ledger.write(ctx.transaction(), entry(id, "B"));
              return Step.next(p);
            })
        .complete(
            (ctx, p) ->
                OperationResult.success(response(201, "{\"id\":\"" + p.paymentId() + "\"}")));
  }

  /** Runs {@link #twoPhases} on {@code id} and crashes inside B, after the charge's commit. */
  private void crashInPhaseB(ScopedKey id) {
    assertThatThrownBy(() -> execute(id, command("10.00"), twoPhases(id, crash())))
        .isInstanceOf(SimulatedCrash.class);
  }

  @Test
  void anAbandonedOwnerIsTakenOverAfterItsLeaseAndWorkResumesAtTheRecoveryPoint() throws Exception {
    ScopedKey id = key("k-takeover");
    crashInPhaseB(id);
    assertThat(record(id).state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(record(id).recoveryPoint()).isEqualTo("A");
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
    assertThat(ledger.count(entry(id, "B"))).isZero();
    assertThat(execute(id, command("10.00"), twoPhases(id))).isInstanceOf(Outcome.InProgress.class);

    clock.advance(LEASE.plusSeconds(1));
    Outcome outcome = execute(id, command("10.00"), twoPhases(id));

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(body(outcome)).isEqualTo("{\"id\":\"pay_k-takeover\"}");
    assertThat(ledger.count(entry(id, "A"))).isEqualTo(1);
    assertThat(ledger.count(entry(id, "B"))).isEqualTo(1);
    assertThat(record(id).fencingToken()).isEqualTo(2);
    assertThat(listener.count("takeover.RESUME_ABANDONED")).isEqualTo(1);
  }

  @Test
  void aZombieOwnerCannotWriteAfterATakeover() throws Exception {
    ScopedKey id = key("k-zombie");
    CountDownLatch zombieInCall = new CountDownLatch(1);
    CountDownLatch wakeZombie = new CountDownLatch(1);
    AtomicInteger charges = new AtomicInteger();
    PhasedOperation.LocalStep<Payment> recordCharge = writes(id, "charge-recorded");
    PhasedOperation<Payment> zombieOp =
        PhasedOperation.builder(Payment.class)
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              charges.incrementAndGet();
                              zombieInCall.countDown();
                              wakeZombie.await(); // a GC pause or partition, past the lease
                              return CallResult.applied(new Payment(null, "ch_zombie"));
                            })
                        .lookup(
                            (ctx, p) ->
                                charges.get() == 0
                                    ? CallResult.notApplied("no charge under this key")
                                    : CallResult.applied(new Payment(null, "ch_zombie")))
                        .afterCall(recordCharge))
            .complete(answers("{\"by\":\"zombie\"}"));
    PhasedOperation<Payment> newOwnerOp =
        PhasedOperation.builder(Payment.class)
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              throw new AssertionError(
                                  "the new owner must recover, not charge again");
                            })
                        .lookup(
                            (ctx, p) -> CallResult.applied(new Payment(null, "ch_found_by_lookup")))
                        .afterCall(recordCharge))
            .complete(
                (ctx, p) ->
                    OperationResult.success(response(201, "{\"by\":\"" + p.chargeId() + "\"}")));

    Future<Outcome> zombie = pool.submit(() -> execute(id, command("10.00"), zombieOp));
    assertThat(zombieInCall.await(30, TimeUnit.SECONDS)).isTrue();
    clock.advance(LEASE.plusSeconds(1));
    Outcome newOwner = execute(id, command("10.00"), newOwnerOp);
    wakeZombie.countDown();

    assertThat(newOwner).isInstanceOf(Outcome.Executed.class);
    assertThatThrownBy(() -> zombie.get(30, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LostOwnershipException.class);
    IdempotencyRecord after = record(id);
    assertThat(after.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(after.fencingToken()).isEqualTo(2);
    assertThat(new String(after.response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"by\":\"ch_found_by_lookup\"}");
    assertThat(ledger.count(entry(id, "charge-recorded"))).isEqualTo(1);
    assertThat(charges).hasValue(1);
    assertThat(listener.count("lostOwnership")).isEqualTo(1);
  }

  @Test
  void everyOwnerWriteIsFencedByItsToken() throws Exception {
    ScopedKey id = key("k-fence");
    Ownership zombie = abandonedClaim(id, command("10.00"));
    clock.advance(LEASE.plusSeconds(1));
    Outcome taken = execute(id, command("10.00"), pay(id, "{\"by\":\"new\"}"));
    assertThat(taken).isInstanceOf(Outcome.Executed.class);

    assertThatThrownBy(() -> store.inTransaction(tx -> store.renew(tx, zombie, LEASE)))
        .isInstanceOf(LostOwnershipException.class);
    assertThatThrownBy(
            () ->
                store.inTransaction(
                    tx -> {
                      store.advance(tx, zombie, new Checkpoint("X", null, Map.of()));
                      return null;
                    }))
        .isInstanceOf(LostOwnershipException.class);
    assertThatThrownBy(
            () ->
                store.inTransaction(
                    tx -> {
                      store.finish(
                          tx, zombie, FinalAnswer.completed(response(201, "{\"by\":\"zombie\"}")));
                      return null;
                    }))
        .isInstanceOf(LostOwnershipException.class);
    assertThatThrownBy(
            () ->
                store.inTransaction(
                    tx -> {
                      store.suspend(tx, zombie, RecordState.FAILED_RETRYABLE);
                      return null;
                    }))
        .isInstanceOf(LostOwnershipException.class);
    assertThat(new String(record(id).response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"by\":\"new\"}");
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void aRetryAfterTheExpiryWindowIsANewOperation() throws Exception {
    ScopedKey id = key("k-expired");
    execute(id, command("10.00"), pay(id, "{\"n\":1}"));
    clock.advance(TTL.minusSeconds(1));
    assertThat(execute(id, command("10.00"), pay(id, "{\"n\":2}")))
        .isInstanceOf(Outcome.Replayed.class);

    clock.advance(Duration.ofSeconds(2));
    Outcome sameCommand = execute(id, command("10.00"), pay(id, "{\"n\":2}"));
    clock.advance(TTL.plusSeconds(1));
    Outcome otherCommand = execute(id, command("25.00"), pay(id, "{\"n\":3}"));

    assertThat(sameCommand).isInstanceOf(Outcome.Executed.class);
    assertThat(otherCommand).isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(3);
    assertThat(record(id).fingerprint()).isEqualTo(command("25.00"));
    assertThat(listener.count("expiredRetry")).isEqualTo(2);
  }

  @Test
  void executeExistingAnswersAKeysRecordButNeverMakesOne() throws Exception {
    ScopedKey unseen = key("k-existing-unseen");
    ScopedKey done = key("k-existing-done");
    ScopedKey retryable = key("k-existing-retryable");

    assertThat(existing(unseen, "10.00")).as("a key without a record").isEmpty();
    assertThat(store.find(unseen)).as("no record made").isEmpty();
    assertThat(payments(unseen)).isZero();

    execute(done, command("10.00"), pay(done, "{\"n\":1}"));
    assertThat(existing(done, "10.00")).get().isInstanceOf(Outcome.Replayed.class);
    assertThat(existing(done, "25.00")).get().isInstanceOf(Outcome.Mismatch.class);

    leaveIn(RecordState.FAILED_RETRYABLE, retryable, command("10.00"));
    assertThat(existing(retryable, "10.00"))
        .as("a retryable failure runs again")
        .get()
        .isInstanceOf(Outcome.Executed.class);
    assertThat(payments(retryable)).isEqualTo(1);

    clock.advance(TTL.plusSeconds(1));
    assertThat(existing(done, "10.00")).as("a record whose window passed").isEmpty();
    assertThat(record(done).state()).as("not replaced").isEqualTo(RecordState.COMPLETED);
    assertThat(payments(done)).isEqualTo(1);
  }

  @Test
  void executeExistingResumesAPhasedOperationButStartsNone() throws Exception {
    ScopedKey unseen = key("k-existing-phased-unseen");
    ScopedKey abandoned = key("k-existing-phased-abandoned");

    assertThat(
            idempotency.executeExisting(
                new IdempotentRequest(unseen, command("10.00"), TTL), twoPhases(unseen)))
        .isEmpty();
    assertThat(store.find(unseen)).as("no record made").isEmpty();
    assertThat(ledger.count(entry(unseen, "A"))).as("no phase ran").isZero();

    crashInPhaseB(abandoned);
    clock.advance(LEASE.plusSeconds(1));
    Optional<Outcome> resumed =
        idempotency.executeExisting(
            new IdempotentRequest(abandoned, command("10.00"), TTL), twoPhases(abandoned));

    assertThat(resumed).get().isInstanceOf(Outcome.Executed.class);
    assertThat(ledger.count(entry(abandoned, "A"))).isEqualTo(1);
    assertThat(ledger.count(entry(abandoned, "B"))).isEqualTo(1);
    assertThat(record(abandoned).state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void executeExistingWaitsForAClaimNotCommittedYet() throws Exception {
    // The first request's claim, its payment and its completion are one transaction: until it
    // commits, no read finds the record. executeExisting must wait for it (as execute does, on
    // the claim), not answer that the key has none while its operation is under way. (An
    // operation that writes its record last, the default, holds no claim to wait on: until it
    // commits, executeExisting finds no record.)
    ScopedKey id = key("k-existing-under-way");
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch secondAnswered = new CountDownLatch(1);
    Future<Outcome> first =
        pool.submit(
            () ->
                execute(
                    id,
                    command("10.00"),
                    LocalOperation.claimingFirst(
                        ctx -> {
                          ledger.write(ctx.transaction(), entry(id, "payment"));
                          inside.countDown();
                          // Commits when the second request is answered, or after 2 s: a second
                          // request that waits on this claim is never answered before it.
                          secondAnswered.await(2, TimeUnit.SECONDS);
                          return OperationResult.success(response(201, "{\"n\":1}"));
                        })));
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
    Future<Optional<Outcome>> second =
        pool.submit(
            () -> {
              try {
                return existing(id, "10.00");
              } finally {
                secondAnswered.countDown();
              }
            });

    assertThat(first.get(60, TimeUnit.SECONDS)).isInstanceOf(Outcome.Executed.class);
    assertThat(second.get(60, TimeUnit.SECONDS))
        .as("the second request, while the first one's claim was not committed")
        .get()
        .isInstanceOfAny(Outcome.Replayed.class, Outcome.InProgress.class);
    assertThat(payments(id)).isEqualTo(1);
  }

  private Optional<Outcome> existing(ScopedKey id, String amount) {
    return idempotency.executeExisting(
        new IdempotentRequest(id, command(amount), TTL),
        (LocalOperation) pay(id, "{\"existing\":true}"));
  }

  @Test
  void anOperationRecoveredAfterItsWindowIsAnsweredForAWholeWindowAfterCompletion()
      throws Exception {
    ScopedKey id = key("k-late");
    Provider provider = new Provider();
    provider.lookupsReachTheRecords.set(false);
    PhasedOperation<Payment> op = provider.payment(id, () -> {}, answerLost());
    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.OutcomePending.class);

    clock.advance(TTL.plusHours(6));
    provider.lookupsReachTheRecords.set(true);
    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Executed.class);
    Instant completedAt = clock.instant();
    assertThat(record(id).expiresAt()).isAfterOrEqualTo(completedAt.plus(TTL));

    clock.advance(TTL.minusMinutes(1));
    Outcome retry = execute(id, command("10.00"), op);
    Outcome otherCommand = execute(id, command("99.00"), pay(id, "{\"n\":2}"));

    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(body(retry)).isEqualTo("{\"charge\":\"ch-1\"}");
    assertThat(otherCommand).isInstanceOf(Outcome.Mismatch.class);
    assertThat(provider.calls).hasValue(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);

    clock.advance(Duration.ofMinutes(2));
    assertThat(execute(id, command("99.00"), pay(id, "{\"n\":3}")))
        .isInstanceOf(Outcome.Executed.class);
  }

  @Test
  void aRejectionByATakeoverAfterTheWindowIsAnsweredForAWholeWindowAfterIt() throws Exception {
    ScopedKey id = key("k-late-rejection");
    abandonedClaim(id, command("10.00"));
    clock.advance(TTL.plusHours(1));
    assertThat(execute(id, command("10.00"), ctx -> OperationResult.rejected(declined())))
        .isInstanceOf(Outcome.Rejected.class);
    assertThat(record(id).expiresAt()).isAfterOrEqualTo(clock.instant().plus(TTL));

    clock.advance(TTL.minusMinutes(1));
    assertThat(execute(id, command("10.00"), pay(id, "{}"))).isInstanceOf(Outcome.Replayed.class);
    assertThat(payments(id)).isZero();
    assertThat(record(id).state()).isEqualTo(RecordState.FAILED_REPLAYABLE);
  }

  private static StoredResponse declined() {
    return response(402, "{\"declined\":true}");
  }

  @Test
  void aFailedRetryableRecordIsReclaimedByExactlyOneOfManyRacers() throws Exception {
    ScopedKey id = key("k-retryable");
    leaveIn(RecordState.FAILED_RETRYABLE, id, command("10.00"));

    List<Outcome> outcomes =
        race(
            32,
            () ->
                execute(
                    id,
                    command("10.00"),
                    PhasedOperation.builder()
                        .local("FIRST", writes(id, "payment"))
                        .external(
                            "CHARGED",
                            call ->
                                call.call((ctx, d) -> CallResult.applied(d))
                                    .farSideDeduplicatesByKey())
                        .complete(answers("{\"ok\":1}"))));

    assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
    assertThat(outcomes)
        .allMatch(
            o ->
                o instanceof Outcome.Executed
                    || o instanceof Outcome.Replayed
                    || o instanceof Outcome.InProgress);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(listener.count("takeover.RECLAIM_RETRYABLE")).isEqualTo(1);
  }

  @Test
  void aBusinessRejectionIsStoredAndReplayed() throws Exception {
    ScopedKey thrown = key("k-declined-thrown");
    AtomicInteger runs = new AtomicInteger();
    LocalOperation declines =
        ctx -> {
          runs.incrementAndGet();
          ledger.write(ctx.transaction(), entry(thrown, "payment"));
          throw new BusinessRejectionException(
              "declined", response(402, "{\"code\":\"card_declined\"}"));
        };

    Outcome first = execute(thrown, command("10.00"), declines);
    Outcome retry = execute(thrown, command("10.00"), declines);

    assertThat(first).isInstanceOf(Outcome.Rejected.class);
    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(((Outcome.Replayed) retry).state()).isEqualTo(RecordState.FAILED_REPLAYABLE);
    assertThat(((Outcome.Replayed) retry).response())
        .isEqualTo(((Outcome.Rejected) first).response());
    // The record is written last: the retry runs the operation before its insert of the record
    // meets the stored one, and everything it wrote rolls back.
    assertThat(runs).hasValue(2);
    assertThat(payments(thrown)).as("a thrown rejection rolls its writes back").isZero();

    ScopedKey claimedFirst = key("k-declined-claimed-first");
    AtomicInteger claimedRuns = new AtomicInteger();
    LocalOperation declinesClaimingFirst =
        LocalOperation.claimingFirst(
            ctx -> {
              claimedRuns.incrementAndGet();
              throw new BusinessRejectionException(
                  "declined", response(402, "{\"code\":\"card_declined\"}"));
            });
    assertThat(execute(claimedFirst, command("10.00"), declinesClaimingFirst))
        .isInstanceOf(Outcome.Rejected.class);
    assertThat(execute(claimedFirst, command("10.00"), declinesClaimingFirst))
        .isInstanceOf(Outcome.Replayed.class);
    assertThat(claimedRuns).as("a claim-first retry finds the record before it runs").hasValue(1);

    ScopedKey returned = key("k-declined-returned");
    LocalOperation keepsRow =
        ctx -> {
          ledger.write(ctx.transaction(), entry(returned, "payment"));
          return OperationResult.rejected(response(402, "{\"code\":\"insufficient_funds\"}"));
        };
    assertThat(execute(returned, command("10.00"), keepsRow)).isInstanceOf(Outcome.Rejected.class);
    assertThat(execute(returned, command("10.00"), keepsRow)).isInstanceOf(Outcome.Replayed.class);
    assertThat(payments(returned)).as("a returned rejection keeps its writes").isEqualTo(1);
  }

  @Test
  void aFailedSingleTransactionOperationLeavesNothingAndRunsAgain() throws Exception {
    ScopedKey id = key("k-boom");
    assertThatThrownBy(
            () ->
                execute(
                    id,
                    command("10.00"),
                    ctx -> {
                      ledger.write(ctx.transaction(), entry(id, "payment"));
                      throw new IllegalStateException("boom");
                    }))
        .isInstanceOf(OperationFailedException.class)
        .hasRootCauseMessage("boom");
    assertThat(store.find(id)).isEmpty();
    assertThat(payments(id)).isZero();

    assertThat(execute(id, command("10.00"), pay(id, "{}"))).isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(1);
  }

  @Test
  void anUnknownDownstreamOutcomeIsRecoveredByLookupNeverByASecondCall() throws Exception {
    ScopedKey id = key("k-unknown");
    Provider provider = new Provider();
    provider.lookupsReachTheRecords.set(false);
    PhasedOperation<Payment> op = provider.payment(id, () -> {}, answerLost());

    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");

    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
    assertThat(record(id).recoveryAttempts()).isEqualTo(2);

    provider.lookupsReachTheRecords.set(true);
    Outcome recovered = execute(id, command("10.00"), op);

    assertThat(recovered).isInstanceOf(Outcome.Executed.class);
    assertThat(body(recovered)).isEqualTo("{\"charge\":\"ch-1\"}");
    assertThat(provider.calls).hasValue(1);
    assertThat(provider.lookups).hasValue(2);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
    assertThat(listener.count("unknownState")).isEqualTo(2);
    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Replayed.class);
  }

  /** The store's recovery administration; only the suite that requires it calls this. */
  private RecoveryAdministration administration() {
    return store.capability(RecoveryAdministration.class).orElseThrow();
  }

  /** The store's cleanup; only the suite that requires it calls this. */
  private RecordCleanup cleanup() {
    return store.capability(RecordCleanup.class).orElseThrow();
  }

  /** An engine on this store with {@code schedule} for its recovery attempts. */
  private Idempotency scheduled(RecoverySchedule schedule) {
    return Idempotency.create(
        store,
        IdempotencyConfig.builder()
            .lease(LEASE)
            .defaultTtl(TTL)
            .listener(listener)
            .ticker(ticker::get)
            .recoverySchedule(schedule)
            .build());
  }

  /**
   * A local phase that fails after a takeover with no external effect before it leaves nothing of
   * the attempt: the record stays failed retryably, and the next retry runs afresh.
   */
  @Test
  void aLocalPhaseThatFailsAfterATakeoverBeforeAnyEffectLeavesTheRecordToRunAfresh()
      throws Exception {
    ScopedKey id = key("k-local-before-effect");
    leaveIn(RecordState.FAILED_RETRYABLE, id, command("10.00"));
    AtomicBoolean broken = new AtomicBoolean(true);
    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .local(
                "PREPARED",
                (ctx, d) -> {
                  ledger.write(ctx.transaction(), entry(id, "prepared"));
                  if (broken.get()) {
                    throw new IllegalStateException("constraint broken");
                  }
                  return Step.next(d);
                })
            .external(
                "CHARGED",
                call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
            .complete(answers("{}"));

    assertThatThrownBy(() -> execute(id, command("10.00"), op))
        .isInstanceOf(OperationFailedException.class)
        .extracting(e -> ((OperationFailedException) e).recordState())
        .isEqualTo(RecordState.FAILED_RETRYABLE);
    assertThat(record(id).state()).isEqualTo(RecordState.FAILED_RETRYABLE);
    assertThat(record(id).recoveryAttempts()).isZero();
    assertThat(ledger.count(entry(id, "prepared"))).as("rolled back").isZero();

    broken.set(false);
    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Executed.class);
    assertThat(ledger.count(entry(id, "prepared"))).isEqualTo(1);
  }

  private List<ScopedKey> awaitingNextAttempt() {
    return administration().findAwaitingNextAttempt(100_000).stream()
        .map(IdempotencyRecord::id)
        .toList();
  }

  private List<ScopedKey> needingRecovery() {
    return store.findNeedingRecovery(100_000).stream().map(IdempotencyRecord::id).toList();
  }

  @Test
  void anExternalCallThatWasNotAppliedIsRetryable() throws Exception {
    ScopedKey id = key("k-not-applied");
    AtomicInteger applied = new AtomicInteger();
    AtomicInteger attempts = new AtomicInteger();
    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, d) -> {
                              if (attempts.incrementAndGet() == 1) {
                                return CallResult.notApplied("503 before charging");
                              }
                              applied.incrementAndGet();
                              return CallResult.applied(d);
                            })
                        .lookup(
                            (ctx, d) ->
                                applied.get() == 0
                                    ? CallResult.notApplied("no charge under this key")
                                    : CallResult.applied(d)))
            .complete(answers("{}"));

    assertThatThrownBy(() -> execute(id, command("10.00"), op))
        .isInstanceOf(OperationFailedException.class);
    assertThat(record(id).state()).isEqualTo(RecordState.FAILED_RETRYABLE);
    assertThat(record(id).pendingExternal()).isNull();

    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Executed.class);
    assertThat(applied).hasValue(1);
  }

  @Test
  void aRecoveryWorkerResumesAbandonedWorkOnce() throws Exception {
    ScopedKey id = key("k-worker");
    crashInPhaseB(id);
    assertThat(store.findNeedingRecovery(1000))
        .extracting(IdempotencyRecord::id)
        .doesNotContain(id);
    assertThat(idempotency.recover(id, twoPhases(id))).isEmpty();

    clock.advance(LEASE.plusSeconds(1));
    assertThat(store.findNeedingRecovery(100_000)).extracting(IdempotencyRecord::id).contains(id);
    List<Boolean> recovered = race(8, () -> idempotency.recover(id, twoPhases(id)).isPresent());

    assertThat(recovered).filteredOn(r -> r).hasSize(1);
    assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(ledger.count(entry(id, "A"))).isEqualTo(1);
    assertThat(ledger.count(entry(id, "B"))).isEqualTo(1);
    assertThat(execute(id, command("10.00"), twoPhases(id))).isInstanceOf(Outcome.Replayed.class);
  }

  @Test
  void theRecoveryScanOfSomeOperationsIsNotFilledByOthers() throws Exception {
    String resumable = "resumable_" + UUID.randomUUID();
    String nobodys = "nobodys_" + UUID.randomUUID();
    List<ScopedKey> others = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      others.add(ScopedKey.of(tenant, nobodys, "k-" + i));
    }
    ScopedKey mine = ScopedKey.of(tenant, resumable, "k-mine");
    for (ScopedKey id : others) {
      crashInPhaseB(id);
    }
    crashInPhaseB(mine);
    clock.advance(LEASE.plusSeconds(1));

    assertThat(store.findNeedingRecovery(3, java.util.Set.of(resumable)))
        .extracting(IdempotencyRecord::id)
        .containsExactly(mine);
    assertThat(store.findNeedingRecovery(3, java.util.Set.of(nobodys)))
        .extracting(IdempotencyRecord::id)
        .hasSize(3)
        .isSubsetOf(others);
    assertThat(store.findNeedingRecovery(3, java.util.Set.of())).isEmpty();
  }

  // ---- phases: commits, results and crashes at each commit boundary --------------------------

  /** What happens at one moment of a charge: nothing, a crash, or a lost answer. */
  @FunctionalInterface
  private interface Moment {
    void run() throws IOException;
  }

  /**
   * The suite's payment: a local phase that writes the payment, a charge whose call and lookup are
   * counted (the lookup finds what the call did, when it reaches the provider's records), a local
   * step after the charge that writes {@code confirmed}, and an answer with the charge id.
   */
  private final class Provider {
    final AtomicInteger charges = new AtomicInteger();
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger lookups = new AtomicInteger();

    /** When false, a lookup answers "unknown", as when the provider's records are unreachable. */
    final AtomicBoolean lookupsReachTheRecords = new AtomicBoolean(true);

    PhasedOperation<Payment> payment(ScopedKey id) {
      return payment(id, () -> {}, () -> {});
    }

    PhasedOperation<Payment> payment(ScopedKey id, Moment beforeCharge, Moment afterCharge) {
      return payment(id, beforeCharge, afterCharge, writes(id, "confirmed"));
    }

    /** {@link #payment(ScopedKey, Moment, Moment)} with {@code afterCall} as the step after it. */
    PhasedOperation<Payment> payment(
        ScopedKey id,
        Moment beforeCharge,
        Moment afterCharge,
        PhasedOperation.LocalStep<Payment> afterCall) {
      return PhasedOperation.builder(Payment.class)
          .local("LOCAL_PAYMENT_CREATED", createsPayment(id))
          .external(
              "CHARGED",
              call ->
                  call.call(
                          (ctx, p) -> {
                            calls.incrementAndGet();
                            beforeCharge.run();
                            charges.incrementAndGet();
                            afterCharge.run();
                            return CallResult.applied(new Payment(p.paymentId(), "ch-1"));
                          })
                      .lookup(
                          (ctx, p) -> {
                            lookups.incrementAndGet();
                            if (!lookupsReachTheRecords.get()) {
                              return CallResult.unknown("lookups unavailable");
                            }
                            return charges.get() == 0
                                ? CallResult.notApplied("no charge under this key")
                                : CallResult.applied(new Payment(p.paymentId(), "ch-1"));
                          })
                      .afterCall(afterCall))
          .complete(answersWithTheCharge());
    }
  }

  private static Moment crash() {
    return () -> {
      throw new SimulatedCrash();
    };
  }

  /** The provider charged, then the connection dropped: the call's outcome is unknown. */
  private static Moment answerLost() {
    return () -> {
      throw new IOException("charged, then the connection dropped");
    };
  }

  @Test
  void anOperationWithOneCallCommitsTwiceAndEachFurtherCallOnceMore() throws Exception {
    ScopedKey one = key("k-commits-one");
    Provider provider = new Provider();
    commits.set(0);
    assertThat(execute(one, command("10.00"), provider.payment(one)))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(commits)
        .as("local phases+record's insert at the marker, then result+local+completion")
        .hasValue(2);

    ScopedKey two = key("k-commits-two");
    PhasedOperation<Map<String, String>> twoCalls =
        PhasedOperation.builder()
            .external(
                "RESERVED",
                call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
            .local("BETWEEN", (ctx, d) -> Step.next(d))
            .external(
                "CHARGED",
                call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
            .complete(answers("{}"));
    commits.set(0);
    assertThat(execute(two, command("10.00"), twoCalls)).isInstanceOf(Outcome.Executed.class);
    assertThat(commits).hasValue(3);

    commits.set(0);
    peeks.set(0);
    assertThat(execute(one, command("10.00"), provider.payment(one)))
        .isInstanceOf(Outcome.Replayed.class);
    assertThat(commits).as("a replay commits nothing: its insert of the record fails").hasValue(0);
    assertThat(peeks).as("the record it met answers").hasValue(1);
    assertThat(provider.charges).hasValue(1);
  }

  @Test
  void aCrashBeforeTheFirstCommitKeepsNothingAndTheRetryRunsAfresh() throws Exception {
    ScopedKey id = key("k-crash-before-first-commit");
    Provider provider = new Provider();
    PhasedOperation<Payment> crashing =
        PhasedOperation.builder(Payment.class)
            .local("LOCAL_PAYMENT_CREATED", createsPayment(id))
            .external(
                "CHARGED",
                call ->
                    call.beforeCall(
                            (ctx, p) -> {
                              throw new SimulatedCrash();
                            })
                        .call((ctx, p) -> CallResult.applied(p))
                        .farSideDeduplicatesByKey())
            .complete(answers("{}"));

    assertThatThrownBy(() -> execute(id, command("10.00"), crashing))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(store.find(id)).as("the claim rolled back with the rest").isEmpty();
    assertThat(payments(id)).isZero();

    assertThat(execute(id, command("10.00"), provider.payment(id)))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(provider.charges).hasValue(1);
    assertThat(provider.lookups).hasValue(0);
  }

  @Test
  void anUnexpectedFailureBeforeTheFirstCommitLeavesNothingAndRunsAgain() throws Exception {
    ScopedKey id = key("k-fail-before-first-commit");
    PhasedOperation<Payment> failing =
        PhasedOperation.builder(Payment.class)
            .local(
                "LOCAL_PAYMENT_CREATED",
                (ctx, p) -> {
                  ledger.write(ctx.transaction(), entry(id, "payment"));
                  throw new IllegalStateException("database hiccup");
                })
            .complete(answers("{}"));

    assertThatThrownBy(() -> execute(id, command("10.00"), failing))
        .isInstanceOf(OperationFailedException.class)
        .hasRootCauseMessage("database hiccup");
    assertThat(store.find(id)).isEmpty();
    assertThat(payments(id)).isZero();
    Provider provider = new Provider();
    assertThat(execute(id, command("10.00"), provider.payment(id)))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(1);
  }

  @Test
  void aCrashAfterTheMarkerBeforeTheCallIsResumedByALookupThenTheCall() throws Exception {
    ScopedKey id = key("k-crash-after-marker");
    Provider provider = new Provider();
    assertThatThrownBy(() -> execute(id, command("10.00"), provider.payment(id, crash(), () -> {})))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(record(id).state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(record(id).recoveryPoint()).isEqualTo("LOCAL_PAYMENT_CREATED");
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
    assertThat(record(id).recoveryData()).containsEntry("paymentId", "p-" + id.key().value());
    assertThat(payments(id)).isEqualTo(1);

    clock.advance(LEASE.plusSeconds(1));
    Outcome resumed = execute(id, command("10.00"), provider.payment(id));

    assertThat(resumed).isInstanceOf(Outcome.Executed.class);
    assertThat(provider.lookups).as("asked first").hasValue(1);
    assertThat(provider.charges).as("then charged, once").hasValue(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
  }

  @Test
  void aCrashAfterTheCallBeforeItsResultCommittedIsRecoveredByLookupNeverASecondCharge()
      throws Exception {
    ScopedKey id = key("k-crash-after-call");
    Provider provider = new Provider();
    assertThatThrownBy(() -> execute(id, command("10.00"), provider.payment(id, () -> {}, crash())))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(provider.charges).hasValue(1);
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
    assertThat(ledger.count(entry(id, "confirmed"))).isZero();

    clock.advance(LEASE.plusSeconds(1));
    assertThat(store.findNeedingRecovery(100_000)).extracting(IdempotencyRecord::id).contains(id);
    Outcome resumed = execute(id, command("10.00"), provider.payment(id));

    assertThat(resumed).isInstanceOf(Outcome.Executed.class);
    assertThat(body(resumed)).isEqualTo("{\"charge\":\"ch-1\"}");
    assertThat(provider.charges).hasValue(1);
    assertThat(provider.calls).hasValue(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
  }

  // ---- how a takeover learns what a call under way did --------------------------------------

  /**
   * A far side that deduplicates by the key it is given ({@code provider_payment_<paymentId>}): a
   * repeated call under a key has no second effect and answers with the first call's charge. Counts
   * the calls and lookups it gets; {@link #charges} holds its effects, one per key.
   */
  private final class KeyedProvider {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger lookups = new AtomicInteger();
    final Map<String, String> charges = new ConcurrentHashMap<>();

    /** The next call charges, then the process dies before the charge's result is recorded. */
    final AtomicBoolean crashAfterNextCharge = new AtomicBoolean();

    CallResult<Payment> charge(Payment p) {
      calls.incrementAndGet();
      String charge = charges.computeIfAbsent(providerKey(p), k -> "ch_" + UUID.randomUUID());
      if (crashAfterNextCharge.getAndSet(false)) {
        throw new SimulatedCrash();
      }
      return CallResult.applied(new Payment(p.paymentId(), charge));
    }

    CallResult<Payment> lookUp(Payment p) {
      lookups.incrementAndGet();
      String charge = charges.get(providerKey(p));
      return charge == null
          ? CallResult.notApplied("no charge under this key")
          : CallResult.applied(new Payment(p.paymentId(), charge));
    }

    /**
     * The suite's payment, its charge named {@code phase}, with {@code learning} saying how a
     * takeover learns what the charge did.
     */
    PhasedOperation<Payment> payment(
        ScopedKey id,
        String phase,
        UnaryOperator<PhasedOperation.ExternalSteps<Payment>> learning) {
      return PhasedOperation.builder(Payment.class)
          .local("LOCAL_PAYMENT_CREATED", createsPayment(id))
          .external(
              phase,
              call ->
                  learning.apply(
                      call.call((ctx, p) -> charge(p)).afterCall(writes(id, "confirmed"))))
          .complete(answersWithTheCharge());
    }

    PhasedOperation<Payment> withLookup(ScopedKey id) {
      return payment(id, "CHARGED", steps -> steps.lookup((ctx, p) -> lookUp(p)));
    }

    PhasedOperation<Payment> deduplicatedByKey(ScopedKey id) {
      return payment(id, "CHARGED", PhasedOperation.ExternalSteps::farSideDeduplicatesByKey);
    }

    private static String providerKey(Payment p) {
      return "provider_payment_" + p.paymentId();
    }
  }

  /**
   * The process died after the far side charged, before the charge's result committed. The phase
   * has no lookup and declares that the far side deduplicates by key, so the takeover makes the
   * call again: the far side gets two calls but charges once, and the payment completes with the
   * first charge.
   */
  @Test
  void aTakeoverAfterTheMarkerRepeatsTheCallOnlyWhenTheFarSideDeduplicatesByKey() throws Exception {
    ScopedKey id = key("k-takeover-deduplicated");
    KeyedProvider provider = new KeyedProvider();
    provider.crashAfterNextCharge.set(true);
    assertThatThrownBy(() -> execute(id, command("10.00"), provider.deduplicatedByKey(id)))
        .isInstanceOf(SimulatedCrash.class);
    assertThat(record(id).state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
    String firstCharge = provider.charges.values().iterator().next();

    clock.advance(LEASE.plusSeconds(1));
    Outcome resumed = execute(id, command("10.00"), provider.deduplicatedByKey(id));

    assertThat(resumed).isInstanceOf(Outcome.Executed.class);
    assertThat(body(resumed)).isEqualTo("{\"charge\":\"" + firstCharge + "\"}");
    assertThat(provider.calls).as("called again, under the same key").hasValue(2);
    assertThat(provider.charges).as("charged once").hasSize(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
    assertThat(execute(id, command("10.00"), provider.deduplicatedByKey(id)))
        .isInstanceOf(Outcome.Replayed.class);
    assertThat(provider.calls).hasValue(2);
  }

  /**
   * The same crash, with a lookup: the takeover asks the far side what the call under the key did,
   * and never makes the call, whichever the far side would allow.
   */
  @Test
  void aTakeoverAfterTheMarkerRunsTheLookupAndNeverTheCall() throws Exception {
    ScopedKey id = key("k-takeover-lookup");
    KeyedProvider provider = new KeyedProvider();
    provider.crashAfterNextCharge.set(true);
    assertThatThrownBy(() -> execute(id, command("10.00"), provider.withLookup(id)))
        .isInstanceOf(SimulatedCrash.class);
    String firstCharge = provider.charges.values().iterator().next();

    clock.advance(LEASE.plusSeconds(1));
    Outcome resumed = execute(id, command("10.00"), provider.withLookup(id));

    assertThat(resumed).isInstanceOf(Outcome.Executed.class);
    assertThat(body(resumed)).isEqualTo("{\"charge\":\"" + firstCharge + "\"}");
    assertThat(provider.lookups).hasValue(1);
    assertThat(provider.calls).as("never called again").hasValue(1);
    assertThat(provider.charges).hasSize(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
  }

  @Test
  void aFailureRecordingTheCallsResultLeavesTheRecordForALookupAtOnce() throws Exception {
    ScopedKey id = key("k-fail-after-call");
    AtomicInteger failures = new AtomicInteger(1);
    Provider provider = new Provider();
    PhasedOperation<Payment> op =
        PhasedOperation.builder(Payment.class)
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              provider.charges.incrementAndGet();
                              return CallResult.applied(new Payment("p", "ch-1"));
                            })
                        .lookup(
                            (ctx, p) -> {
                              provider.lookups.incrementAndGet();
                              return CallResult.applied(new Payment("p", "ch-1"));
                            })
                        .afterCall(
                            (ctx, p) -> {
                              ledger.write(ctx.transaction(), entry(id, "confirmed"));
                              if (failures.getAndDecrement() > 0) {
                                throw new IllegalStateException("constraint violated");
                              }
                              return Step.next(p);
                            }))
            .complete(answers("{}"));

    assertThatThrownBy(() -> execute(id, command("10.00"), op))
        .isInstanceOf(OperationFailedException.class)
        .satisfies(
            e ->
                assertThat(((OperationFailedException) e).recordState())
                    .isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY));
    assertThat(ledger.count(entry(id, "confirmed"))).as("rolled back").isZero();
    assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");

    Outcome retry = execute(id, command("10.00"), op);

    assertThat(retry).as("recovery due at once: no wait").isInstanceOf(Outcome.Executed.class);
    assertThat(provider.charges).hasValue(1);
    assertThat(provider.lookups).hasValue(1);
    assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
  }

  @Test
  void theStepAfterACallCanEndTheOperationWithARejectionThatKeepsItsWrites() throws Exception {
    ScopedKey id = key("k-declined-after-call");
    AtomicInteger calls = new AtomicInteger();
    PhasedOperation<Payment> op =
        PhasedOperation.builder(Payment.class)
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              calls.incrementAndGet();
                              return CallResult.applied(new Payment("p", "declined"));
                            })
                        .farSideDeduplicatesByKey() // answers a repeat with the same decline
                        .afterCall(
                            (ctx, p) -> {
                              ledger.write(ctx.transaction(), entry(id, "declined"));
                              return "declined".equals(p.chargeId())
                                  ? Step.answer(OperationResult.rejected(declined()))
                                  : Step.next(p);
                            }))
            .local(
                "SHIPPED",
                (ctx, p) -> {
                  throw new AssertionError("a declined payment ships nothing");
                })
            .complete(answers("{}"));

    Outcome first = execute(id, command("10.00"), op);
    Outcome retry = execute(id, command("10.00"), op);

    assertThat(first).isInstanceOf(Outcome.Rejected.class);
    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(retry.storedResponse().orElseThrow().status()).isEqualTo(402);
    assertThat(record(id).state()).isEqualTo(RecordState.FAILED_REPLAYABLE);
    assertThat(ledger.count(entry(id, "declined"))).isEqualTo(1);
    assertThat(calls).hasValue(1);
  }

  @Test
  void aRefusalFromTheFarSideIsStoredAndReplayed() throws Exception {
    ScopedKey id = key("k-rejected-by-far-side");
    AtomicInteger calls = new AtomicInteger();
    PhasedOperation<Payment> op =
        PhasedOperation.builder(Payment.class)
            .local("LOCAL_PAYMENT_CREATED", createsPayment(id))
            .external(
                "CHARGED",
                call ->
                    call.call(
                            (ctx, p) -> {
                              calls.incrementAndGet();
                              return CallResult.rejected(declined());
                            })
                        .farSideDeduplicatesByKey())
            .complete(answers("{}"));

    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Rejected.class);
    Outcome retry = execute(id, command("10.00"), op);

    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(((Outcome.Replayed) retry).state()).isEqualTo(RecordState.FAILED_REPLAYABLE);
    assertThat(retry.storedResponse().orElseThrow().status()).isEqualTo(402);
    assertThat(calls).hasValue(1);
    assertThat(payments(id)).isEqualTo(1);
  }

  @Test
  void aLongCallRenewsTheLeaseBeforeItsResultIsRecorded() throws Exception {
    ScopedKey id = key("k-long-call");
    AtomicReference<Instant> leaseDuringSecondCall = new AtomicReference<>();
    Instant claimedAt = clock.instant();
    PhasedOperation<Map<String, String>> op =
        twoCallsReadingTheLease(
            id,
            leaseDuringSecondCall,
            () -> {
              // 20 s of a 30 s lease pass during the first call, on both clocks.
              clock.advance(Duration.ofSeconds(20));
              ticker.addAndGet(Duration.ofSeconds(20).toNanos());
            });

    assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.Executed.class);

    assertThat(leaseDuringSecondCall.get())
        .as("renewed from the engine's ticker, on the store's clock")
        .isAfterOrEqualTo(claimedAt.plus(Duration.ofSeconds(20)).plus(LEASE).minusMillis(1));

    ScopedKey quick = key("k-quick-call");
    AtomicReference<Instant> leaseOfQuick = new AtomicReference<>();
    Instant quickClaimedAt = clock.instant();
    PhasedOperation<Map<String, String>> quickOp =
        twoCallsReadingTheLease(quick, leaseOfQuick, () -> clock.advance(Duration.ofSeconds(20)));
    assertThat(execute(quick, command("10.00"), quickOp)).isInstanceOf(Outcome.Executed.class);
    assertThat(leaseOfQuick.get())
        .as("no time passed on the ticker: no renewal round trip")
        .isBeforeOrEqualTo(quickClaimedAt.plus(LEASE).plusMillis(1));
  }

  /**
   * Two calls: the first runs {@code duringFirstCall}; the second reads the lease of {@code id}'s
   * record into {@code leaseDuringSecondCall}.
   */
  private PhasedOperation<Map<String, String>> twoCallsReadingTheLease(
      ScopedKey id, AtomicReference<Instant> leaseDuringSecondCall, Moment duringFirstCall) {
    return PhasedOperation.builder()
        .external(
            "RESERVED",
            call ->
                call.call(
                        (ctx, d) -> {
                          duringFirstCall.run();
                          return CallResult.applied(d);
                        })
                    .farSideDeduplicatesByKey())
        .external(
            "CHARGED",
            call ->
                call.call(
                        (ctx, d) -> {
                          leaseDuringSecondCall.set(record(id).lockedUntil());
                          return CallResult.applied(d);
                        })
                    .farSideDeduplicatesByKey())
        .complete(answers("{}"));
  }

  @Test
  void typedPhaseDataKeepsOnlySmallValuesAndRoundTrips() {
    PhaseData<Payment> data = PhaseData.of(Payment.class);
    assertThat(data.read(Map.of())).isEqualTo(new Payment(null, null));
    assertThat(data.read(data.write(new Payment("p-1", "ch-1"))))
        .isEqualTo(new Payment("p-1", "ch-1"));
    assertThat(data.write(new Payment("p-1", null))).containsExactly(Map.entry("paymentId", "p-1"));
    assertThatThrownBy(() -> PhaseData.of(WithList.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("items");
  }

  /** Phase data that is not small values. */
  public record WithList(List<String> items) {}

  @Test
  void retriesOfFinishedOperationsAreAnsweredWithoutATransactionOnceTheyAreMostRequests()
      throws Exception {
    ScopedKey id = key("k-read-first");
    assertThat(execute(id, command("10.00"), pay(id, "{\"n\":1}")))
        .isInstanceOf(Outcome.Executed.class);
    for (int i = 0; i < 30; i++) {
      assertThat(execute(id, command("10.00"), pay(id, "{\"n\":2}")))
          .isInstanceOf(Outcome.Replayed.class);
    }
    commits.set(0);
    peeks.set(0);

    Outcome replay = execute(id, command("10.00"), pay(id, "{\"n\":3}"));
    Outcome otherCommand = execute(id, command("99.00"), pay(id, "{\"n\":4}"));
    ScopedKey fresh = key("k-read-first-new");
    Outcome first = execute(fresh, command("10.00"), pay(fresh, "{\"n\":5}"));

    assertThat(replay).isInstanceOf(Outcome.Replayed.class);
    assertThat(body(replay)).isEqualTo("{\"n\":1}");
    assertThat(otherCommand).isInstanceOf(Outcome.Mismatch.class);
    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(peeks).as("each answered by a read first").hasValue(3);
    assertThat(commits).as("only the new key needed a transaction").hasValue(1);
    assertThat(payments(id)).isEqualTo(1);
    assertThat(payments(fresh)).isEqualTo(1);

    clock.advance(TTL.plusSeconds(1));
    assertThat(execute(id, command("10.00"), pay(id, "{\"n\":6}")))
        .as("an expired record is not answered by the read: the retry runs as new")
        .isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(2);
  }

  @Test
  void theSameKeyUnderTwoTenantsIsTwoIndependentOperations() throws Exception {
    ScopedKey a = ScopedKey.of(tenant + "-a", "create_payment", "shared-key");
    ScopedKey b = ScopedKey.of(tenant + "-b", "create_payment", "shared-key");

    Outcome inA = execute(a, command("10.00"), pay(a, "{\"tenant\":\"a\"}"));
    Outcome inB = execute(b, command("99.00"), pay(b, "{\"tenant\":\"b\"}"));

    assertThat(inA).isInstanceOf(Outcome.Executed.class);
    assertThat(inB).isInstanceOf(Outcome.Executed.class);
    assertThat(payments(a)).isEqualTo(1);
    assertThat(payments(b)).isEqualTo(1);
    assertThat(execute(b, command("99.00"), pay(b, "{}")).storedResponse().orElseThrow().body())
        .asString(StandardCharsets.UTF_8)
        .isEqualTo("{\"tenant\":\"b\"}");
  }

  /**
   * A store lacks a capability a configuration needs: the engine is refused at creation, with a
   * message naming the missing interface, never in the middle of a request. A wrapper has the
   * capabilities of the store underneath, not those its own class implements; and a store with no
   * capability still runs operations.
   */
  @Test
  void aStoreLackingACapabilityTheConfigurationNeedsIsRefusedAtCreation() throws Exception {
    IdempotencyStore bare = new WithoutCapabilities(store);
    assertThat(bare.capability(RecoveryAdministration.class))
        .as("the wrapper's own class implements it, the store underneath does not")
        .isEmpty();

    assertThatThrownBy(
            () ->
                Idempotency.create(
                    bare,
                    IdempotencyConfig.builder()
                        .recoverySchedule(
                            new RecoverySchedule(Duration.ofSeconds(10), Duration.ofHours(1), 8))
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(WithoutCapabilities.class.getName())
        .hasMessageContaining(
            "lacks the store capability " + RecoveryAdministration.class.getName())
        .hasMessageContaining("a recovery schedule");
    assertThatThrownBy(
            () ->
                Idempotency.create(
                    bare, IdempotencyConfig.builder().quotas(new Quotas(5, 0)).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lacks the store capability " + QuotaSync.class.getName())
        .hasMessageContaining("quotas");

    Idempotency plain =
        Idempotency.create(bare, IdempotencyConfig.builder().lease(LEASE).defaultTtl(TTL).build());
    ScopedKey id = key("k-no-capabilities");
    assertThat(plain.execute(new IdempotentRequest(id, command("10.00"), TTL), pay(id, "{}")))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(payments(id)).isEqualTo(1);
  }

  /**
   * The store with none of its capabilities: what it answers for each is empty. Its class claims
   * {@link RecoveryAdministration} to show that a wrapper's own interfaces are not what counts.
   */
  private static final class WithoutCapabilities extends ForwardingIdempotencyStore
      implements RecoveryAdministration {

    WithoutCapabilities(IdempotencyStore delegate) {
      super(
          new ForwardingIdempotencyStore(delegate) {
            @Override
            public <T> Optional<T> capability(Class<T> type) {
              return Optional.empty();
            }
          });
    }

    @Override
    public RecoveryBackoff backOffRecovery(
        ScopedKey id, Duration firstDelay, Duration maxDelay, int maxAttempts) {
      throw new AssertionError("never looked up");
    }

    @Override
    public List<IdempotencyRecord> findAwaitingNextAttempt(int limit) {
      throw new AssertionError("never looked up");
    }

    @Override
    public List<IdempotencyRecord> findEscalated(int limit) {
      throw new AssertionError("never looked up");
    }

    @Override
    public boolean resolve(
        ScopedKey id, OperatorResolution resolution, String actor, String reason) {
      throw new AssertionError("never looked up");
    }
  }

  /**
   * The {@link RecoveryAdministration} capability: recovery backoff, escalation to an operator, the
   * operator's lists and verdicts. Skipped for a store without it.
   */
  @Nested
  class RecoveryAdministrationContract {

    @BeforeEach
    void requireCapability() {
      assumeTrue(
          store.capability(RecoveryAdministration.class).isPresent(),
          () -> "the store has no " + RecoveryAdministration.class.getSimpleName());
    }

    /**
     * In the recovery worker's order (an attempt that leaves the outcome unknown, then the
     * backoff): the first recovery is due at once, then {@code backoff}, twice as long each time,
     * and the record is escalated when its attempts (the first request's included) reach the limit.
     */
    @Test
    void recoveryBacksOffFromTheWorkersFirstAttemptThenEscalatesAtTheLimit() throws Exception {
      ScopedKey id = key("k-backoff");
      Provider provider = new Provider();
      provider.lookupsReachTheRecords.set(false);
      PhasedOperation<Payment> op = provider.payment(id, () -> {}, answerLost());
      assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);
      Duration backoff = Duration.ofSeconds(10);
      for (Duration wait : List.of(backoff, backoff.multipliedBy(2), backoff.multipliedBy(4))) {
        assertThat(idempotency.recover(id, op)).get().isInstanceOf(Outcome.OutcomePending.class);
        assertThat(awaitingNextAttempt()).as("not waiting while due").doesNotContain(id);
        assertThat(administration().backOffRecovery(id, backoff, Duration.ofHours(1), 5))
            .isEqualTo(RecoveryBackoff.DEFERRED);
        assertThat(administration().findAwaitingNextAttempt(100_000))
            .as("listed between attempts, with its next attempt")
            .filteredOn(r -> r.id().equals(id))
            .singleElement()
            .satisfies(r -> assertThat(r.lockedUntil()).isEqualTo(clock.instant().plus(wait)));
        clock.advance(wait.minusMillis(1));
        assertThat(needingRecovery()).as("not due before %s", wait).doesNotContain(id);
        clock.advance(Duration.ofMillis(1));
        assertThat(needingRecovery()).as("due after %s", wait).contains(id);
      }

      assertThat(idempotency.recover(id, op)).get().isInstanceOf(Outcome.OutcomePending.class);
      assertThat(record(id).recoveryAttempts()).isEqualTo(5);
      assertThat(administration().backOffRecovery(id, backoff, Duration.ofHours(1), 5))
          .isEqualTo(RecoveryBackoff.ESCALATED);
      clock.advance(Duration.ofDays(1));
      assertThat(needingRecovery()).as("escalated: no automatic recovery").doesNotContain(id);
      assertThat(administration().findEscalated(100_000))
          .extracting(IdempotencyRecord::id)
          .contains(id);
      assertThat(awaitingNextAttempt()).as("escalated, not waiting").doesNotContain(id);
      assertThat(administration().backOffRecovery(id, backoff, Duration.ofHours(1), 5))
          .isEqualTo(RecoveryBackoff.ALREADY_ESCALATED);
      assertThat(provider.calls).as("never called twice").hasValue(1);
    }

    /**
     * With a recovery schedule, a client's retries follow it as a worker does: a retry's attempt
     * that leaves the outcome unknown makes the next one wait (and says so in Retry-After), retries
     * in between attempt nothing, and the record is escalated after the same number of attempts,
     * not sooner because a client retried often.
     */
    @Test
    void clientRetriesFollowTheRecoveryScheduleAndCannotUseUpItsAttempts() throws Exception {
      Duration first = Duration.ofSeconds(10);
      Idempotency scheduled = scheduled(new RecoverySchedule(first, Duration.ofHours(1), 4));
      ScopedKey id = key("k-schedule");
      Provider provider = new Provider();
      provider.lookupsReachTheRecords.set(false);
      PhasedOperation<Payment> op = provider.payment(id, () -> {}, answerLost());
      IdempotentRequest request = new IdempotentRequest(id, command("10.00"), TTL);

      assertThat(scheduled.execute(request, op)).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);

      List<Duration> waits = new ArrayList<>();
      for (int attempt = 2; attempt <= 3; attempt++) {
        Outcome answer = scheduled.execute(request, op);
        assertThat(answer).isInstanceOf(Outcome.OutcomePending.class);
        assertThat(((Outcome.OutcomePending) answer).awaitsOperator()).isFalse();
        Duration wait = ((Outcome.OutcomePending) answer).retryAfter();
        waits.add(wait);
        assertThat(record(id).recoveryAttempts()).isEqualTo(attempt);
        for (int retry = 0; retry < 4; retry++) {
          clock.advance(wait.dividedBy(5));
          assertThat(scheduled.execute(request, op))
              .as("a retry inside the wait")
              .isInstanceOf(Outcome.OutcomePending.class);
        }
        assertThat(record(id).recoveryAttempts())
            .as("retries inside the wait attempt nothing")
            .isEqualTo(attempt);
        assertThat(needingRecovery()).doesNotContain(id);
        clock.advance(wait.dividedBy(5));
      }
      assertThat(waits).containsExactly(first, first.multipliedBy(2));

      Outcome last = scheduled.execute(request, op);
      assertThat(last).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(record(id).recoveryAttempts()).isEqualTo(4);
      assertThat(((Outcome.OutcomePending) last).awaitsOperator())
          .as("the last attempt says the outcome now awaits an operator")
          .isTrue();
      assertThat(((Outcome.OutcomePending) last).retryAfter()).isGreaterThanOrEqualTo(MINUTE);
      Outcome later = scheduled.execute(request, op);
      assertThat(((Outcome.OutcomePending) later).awaitsOperator())
          .as("so does a retry of the escalated record")
          .isTrue();
      assertThat(((Outcome.OutcomePending) later).retryAfter()).isGreaterThanOrEqualTo(MINUTE);
      assertThat(record(id).recoveryAttempts()).isEqualTo(4);
      assertThat(administration().findEscalated(100_000))
          .extracting(IdempotencyRecord::id)
          .contains(id);
      assertThat(listener.count("escalated")).isEqualTo(1);
      clock.advance(Duration.ofDays(1));
      assertThat(needingRecovery()).as("escalated: no automatic recovery").doesNotContain(id);
      assertThat(provider.calls).as("never called twice").hasValue(1);
    }

    /**
     * The provider charged, but the step after the call fails (a broken constraint): the result is
     * not recorded, so the outcome is as unknown as a lost answer and is recovered the same way:
     * the next attempt asks the provider (never charges again) and goes on, on the record's
     * recovery schedule, so a client retrying in a loop neither loops lookups nor escalates the
     * record sooner. Once the step works, a due retry completes the payment with the one charge.
     */
    @Test
    void aStepThatFailsAfterTheCallLeavesTheOutcomeToRecoveryOnTheSchedule() throws Exception {
      Duration first = Duration.ofSeconds(10);
      Idempotency scheduled = scheduled(new RecoverySchedule(first, Duration.ofHours(1), 4));
      ScopedKey id = key("k-after-call-fails");
      Provider provider = new Provider();
      AtomicBoolean fixed = new AtomicBoolean();
      PhasedOperation<Payment> op =
          provider.payment(
              id,
              () -> {},
              () -> {},
              (ctx, p) -> {
                if (!fixed.get()) {
                  throw new IllegalStateException("ledger constraint broken");
                }
                ledger.write(ctx.transaction(), entry(id, "confirmed"));
                return Step.next(p);
              });
      IdempotentRequest request = new IdempotentRequest(id, command("10.00"), TTL);

      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class)
          .hasRootCauseMessage("ledger constraint broken");
      assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
      assertThat(record(id).recoveryAttempts()).isEqualTo(1);
      assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);

      // The second attempt asks the provider, fails the same way, and spaces out the next one.
      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class);
      assertThat(record(id).recoveryAttempts()).isEqualTo(2);
      for (int retry = 0; retry < 5; retry++) {
        Outcome answer = scheduled.execute(request, op);
        assertThat(answer).as("a retry inside the wait").isInstanceOf(Outcome.OutcomePending.class);
        clock.advance(Duration.ofSeconds(1));
      }
      assertThat(record(id).recoveryAttempts())
          .as("retries inside the wait attempt nothing")
          .isEqualTo(2);
      assertThat(provider.lookups).hasValue(1);

      fixed.set(true);
      clock.advance(first);
      assertThat(scheduled.execute(request, op)).isInstanceOf(Outcome.Executed.class);
      assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
      assertThat(provider.lookups).hasValue(2);
      assertThat(provider.charges).as("charged once").hasValue(1);
      assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
    }

    /**
     * The provider charged and the charge is recorded; the receipt's call said it did nothing, so a
     * retry goes on from the charge. Then the local step before the receipt's call fails on every
     * attempt (a bug, a constraint). The charge happened, so the record is never failed retryably
     * and never left in progress for the next owner to fail the same way on every pass: each
     * attempt is counted, on the record's recovery schedule, and the last one escalates to an
     * operator. Once the step works, a retry finishes the payment with the one charge.
     */
    @Test
    void aLocalPhaseThatFailsAfterAnEffectFollowsTheRecoveryScheduleThenEscalates()
        throws Exception {
      Duration first = Duration.ofSeconds(10);
      Idempotency scheduled = scheduled(new RecoverySchedule(first, Duration.ofHours(1), 3));
      ScopedKey id = key("k-local-after-effect");
      AtomicInteger charges = new AtomicInteger();
      AtomicInteger receipts = new AtomicInteger();
      AtomicBoolean broken = new AtomicBoolean();
      PhasedOperation<Map<String, String>> op =
          PhasedOperation.builder()
              .external(
                  "CHARGED",
                  call ->
                      call.call(
                              (ctx, d) -> {
                                charges.incrementAndGet();
                                return CallResult.applied(d);
                              })
                          .lookup(
                              (ctx, d) ->
                                  charges.get() == 0
                                      ? CallResult.notApplied("no charge under this key")
                                      : CallResult.applied(d)))
              .external(
                  "RECEIPT_SENT",
                  call ->
                      call.beforeCall(
                              (ctx, d) -> {
                                if (broken.get()) {
                                  throw new IllegalStateException("receipt constraint broken");
                                }
                                ledger.write(ctx.transaction(), entry(id, "receipt-prepared"));
                                return Step.next(d);
                              })
                          .call(
                              (ctx, d) ->
                                  receipts.incrementAndGet() == 1
                                      ? CallResult.notApplied("mail service busy")
                                      : CallResult.applied(d))
                          .farSideDeduplicatesByKey()) // the mail service keeps one mail per key
              .complete(answers("{\"paid\":true}"));
      IdempotentRequest request = new IdempotentRequest(id, command("10.00"), TTL);

      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class);
      assertThat(record(id).state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(record(id).recoveryPoint()).isEqualTo("CHARGED");
      assertThat(record(id).pendingExternal()).isNull();

      broken.set(true);
      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class)
          .hasRootCauseMessage("receipt constraint broken")
          .extracting(e -> ((OperationFailedException) e).recordState())
          .isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(id).recoveryPoint()).isEqualTo("CHARGED");
      assertThat(record(id).recoveryAttempts()).isEqualTo(1);
      assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);

      // The second attempt fails the same way and spaces out the next one.
      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class);
      assertThat(record(id).recoveryAttempts()).isEqualTo(2);
      for (int retry = 0; retry < 5; retry++) {
        assertThat(scheduled.execute(request, op))
            .as("a retry inside the wait")
            .isInstanceOf(Outcome.OutcomePending.class);
        clock.advance(Duration.ofSeconds(1));
      }
      assertThat(record(id).recoveryAttempts())
          .as("retries inside the wait attempt nothing")
          .isEqualTo(2);
      assertThat(needingRecovery()).doesNotContain(id);

      clock.advance(first);
      assertThatThrownBy(() -> scheduled.execute(request, op))
          .isInstanceOf(OperationFailedException.class);
      assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(id).recoveryAttempts()).isEqualTo(3);
      assertThat(administration().findEscalated(100_000))
          .extracting(IdempotencyRecord::id)
          .contains(id);
      assertThat(listener.count("escalated")).isEqualTo(1);
      clock.advance(Duration.ofDays(1));
      assertThat(needingRecovery()).as("escalated: no automatic recovery").doesNotContain(id);

      broken.set(false);
      assertThat(scheduled.execute(request, op)).isInstanceOf(Outcome.Executed.class);
      assertThat(record(id).state()).isEqualTo(RecordState.COMPLETED);
      assertThat(charges).as("charged once").hasValue(1);
      assertThat(receipts).hasValue(2);
      assertThat(ledger.count(entry(id, "receipt-prepared"))).isEqualTo(2);
    }

    /**
     * With a limit of one attempt, the first request's own attempt is the last: its unknown outcome
     * goes to an operator at once, with no automatic attempt after it.
     */
    @Test
    void aLimitOfOneAttemptEscalatesTheFirstRequestsUnknownOutcomeAtOnce() throws Exception {
      Duration first = Duration.ofSeconds(10);
      Idempotency scheduled = scheduled(new RecoverySchedule(first, Duration.ofHours(1), 1));
      ScopedKey id = key("k-one-attempt");
      Provider provider = new Provider();
      provider.lookupsReachTheRecords.set(false);
      PhasedOperation<Payment> op = provider.payment(id, () -> {}, answerLost());

      Outcome answer = scheduled.execute(new IdempotentRequest(id, command("10.00"), TTL), op);

      assertThat(answer).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(record(id).recoveryAttempts()).isEqualTo(1);
      assertThat(administration().findEscalated(100_000))
          .extracting(IdempotencyRecord::id)
          .contains(id);
      assertThat(listener.count("escalated")).isEqualTo(1);
      assertThat(needingRecovery()).as("no automatic attempt after the limit").doesNotContain(id);
    }

    /**
     * A record whose pending call names a phase the operation no longer declares (written by an
     * older definition, the phase since renamed): nothing can learn what the call did, so no call
     * is made, neither the old phase's nor the renamed one's. The outcome is unknown: the record
     * waits for recovery, on the schedule, and the last attempt leaves it to an operator. Once a
     * definition declares the phase again (with its lookup) and an operator made the record due, it
     * completes with the one charge.
     */
    @Test
    void aTakeoverThatCannotLearnWhatTheCallDidNeverCallsAndLeavesTheOutcomeToRecovery()
        throws Exception {
      Idempotency scheduled =
          scheduled(new RecoverySchedule(Duration.ofSeconds(10), Duration.ofHours(1), 2));
      ScopedKey id = key("k-takeover-undeclared");
      IdempotentRequest request = new IdempotentRequest(id, command("10.00"), TTL);
      KeyedProvider provider = new KeyedProvider();
      provider.crashAfterNextCharge.set(true);
      assertThatThrownBy(() -> scheduled.execute(request, provider.withLookup(id)))
          .isInstanceOf(SimulatedCrash.class);
      assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
      PhasedOperation<Payment> renamed =
          provider.payment(
              id, "PROVIDER_CHARGED", steps -> steps.lookup((ctx, p) -> provider.lookUp(p)));

      clock.advance(LEASE.plusSeconds(1));
      Outcome first = scheduled.execute(request, renamed);

      assertThat(first).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(((Outcome.OutcomePending) first).awaitsOperator()).isFalse();
      assertThat(record(id).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(id).pendingExternal()).isEqualTo("CHARGED");
      assertThat(record(id).recoveryAttempts()).isEqualTo(1);
      assertThat(needingRecovery()).as("the first recovery is due at once").contains(id);
      assertThat(provider.calls).as("never called again").hasValue(1);
      assertThat(provider.lookups).hasValue(0);

      Outcome last = scheduled.execute(request, renamed);

      assertThat(last).isInstanceOf(Outcome.OutcomePending.class);
      assertThat(((Outcome.OutcomePending) last).awaitsOperator()).isTrue();
      assertThat(record(id).recoveryAttempts()).isEqualTo(2);
      assertThat(administration().findEscalated(100_000))
          .extracting(IdempotencyRecord::id)
          .contains(id);
      assertThat(listener.count("escalated")).isEqualTo(1);
      assertThat(provider.calls).as("never called again").hasValue(1);
      assertThat(provider.charges).hasSize(1);
      assertThat(ledger.count(entry(id, "confirmed"))).isZero();

      assertThat(
              administration()
                  .resolve(id, OperatorResolution.applied("ch_seen"), "ops@example", "redeploy"))
          .as("an escalated record takes a resolution")
          .isTrue();
      assertThat(scheduled.execute(request, provider.withLookup(id)))
          .isInstanceOf(Outcome.Executed.class);
      assertThat(provider.lookups).hasValue(1);
      assertThat(provider.calls).as("charged once, called once").hasValue(1);
      assertThat(ledger.count(entry(id, "confirmed"))).isEqualTo(1);
    }

    @Test
    void anOperatorsVerdictReachesTheLookupOnce() throws Exception {
      ScopedKey id = key("k-verdict");
      AtomicInteger calls = new AtomicInteger();
      List<String> seen = new ArrayList<>();
      PhasedOperation<Payment> op =
          PhasedOperation.builder(Payment.class)
              .external(
                  "CHARGED",
                  call ->
                      call.call(
                              (ctx, p) -> {
                                calls.incrementAndGet();
                                throw new IOException("timed out");
                              })
                          .lookup(
                              (ctx, p) -> {
                                seen.add(
                                    ctx.operatorResolution()
                                        .map(OperatorResolution::outcome)
                                        .orElse("none"));
                                return ctx.operatorResolution()
                                    .<CallResult<Payment>>map(
                                        v ->
                                            CallResult.applied(
                                                new Payment("p", v.externalReference())))
                                    .orElse(CallResult.unknown("provider unreachable"));
                              }))
              .complete(answersWithTheCharge());
      assertThat(execute(id, command("10.00"), op)).isInstanceOf(Outcome.OutcomePending.class);
      clock.advance(LEASE.plusSeconds(1));
      assertThat(
              administration()
                  .resolve(id, OperatorResolution.applied("ch_found"), "ops@example", "dashboard"))
          .isTrue();

      Outcome resolved = execute(id, command("10.00"), op);

      assertThat(resolved).isInstanceOf(Outcome.Executed.class);
      assertThat(body(resolved)).isEqualTo("{\"charge\":\"ch_found\"}");
      assertThat(seen).containsExactly("APPLIED");
      assertThat(calls).hasValue(1);
    }
  }

  /** The {@link RecordCleanup} capability: cleanup runs. Skipped for a store without it. */
  @Nested
  class RecordCleanupContract {

    @BeforeEach
    void requireCapability() {
      assumeTrue(
          store.capability(RecordCleanup.class).isPresent(),
          () -> "the store has no " + RecordCleanup.class.getSimpleName());
    }

    @Test
    void cleanupDropsExpiredBodiesThenMetadataButNeverTouchesLiveRecords() throws Exception {
      ScopedKey done = key("k-clean-done");
      ScopedKey busy = key("k-clean-busy");
      ScopedKey unknown = key("k-clean-unknown");
      leaveIn(RecordState.COMPLETED, done, command("10.00"));
      leaveIn(RecordState.IN_PROGRESS, busy, command("10.00"));
      leaveIn(RecordState.UNKNOWN_REQUIRES_RECOVERY, unknown, command("10.00"));
      Duration retention = Duration.ofDays(7);

      clock.advance(TTL.plusMinutes(1));
      cleanup().cleanup(retention, 2);
      assertThat(record(done).response()).as("body dropped after the window").isNull();
      assertThat(record(done).fingerprint()).as("metadata kept").isEqualTo(command("10.00"));

      clock.advance(retention.plusDays(30));
      cleanup().cleanup(retention, 2);

      assertThat(store.find(done)).isEmpty();
      assertThat(record(busy).state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(record(unknown).state()).isEqualTo(RecordState.UNKNOWN_REQUIRES_RECOVERY);
      assertThat(record(unknown).pendingExternal()).isEqualTo("CHARGED");
    }

    /**
     * Each run is an object with its own position: two runs going on at once (two instances'
     * workers) drop every expired body between them, batch by batch, and keep the records'
     * metadata; a live record is never touched.
     */
    @Test
    void twoRunsGoingOnAtOnceDropEveryExpiredBodyBetweenThem() throws Exception {
      List<ScopedKey> done = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        ScopedKey id = key("k-run-" + i);
        leaveIn(RecordState.COMPLETED, id, command("10.00"));
        done.add(id);
      }
      ScopedKey busy = key("k-run-busy");
      leaveIn(RecordState.IN_PROGRESS, busy, command("10.00"));
      clock.advance(TTL.plusMinutes(1));
      Duration retention = Duration.ofDays(7);

      CleanupRun first = cleanup().beginRun();
      CleanupRun second = cleanup().beginRun();
      CleanupResult a;
      CleanupResult b;
      do {
        a = first.batch(Duration.ZERO, retention, 2);
        b = second.batch(Duration.ZERO, retention, 2);
      } while (a.bodiesDropped() > 0 || b.bodiesDropped() > 0);

      for (ScopedKey id : done) {
        assertThat(record(id).response()).as("body of %s dropped", id).isNull();
        assertThat(record(id).fingerprint()).as("metadata kept").isEqualTo(command("10.00"));
      }
      assertThat(record(busy).state()).isEqualTo(RecordState.IN_PROGRESS);
    }
  }

  /**
   * The {@link QuotaSync} capability: quotas, their counts shared between instances. Skipped for a
   * store without it.
   */
  @Nested
  class QuotaSyncContract {

    @BeforeEach
    void requireCapability() {
      assumeTrue(
          store.capability(QuotaSync.class).isPresent(),
          () -> "the store has no " + QuotaSync.class.getSimpleName());
    }

    @Test
    void aFloodOfNewKeysGetsExactlyTheQuotasAndRetriesOfAdmittedKeysAreNeverRefused()
        throws Exception {
      Idempotency limited =
          Idempotency.create(
              store,
              IdempotencyConfig.builder()
                  .lease(LEASE)
                  .defaultTtl(TTL)
                  .quotas(new Quotas(5, 0))
                  .build());
      limited.syncQuotas(); // minutes on the store's clock from here on
      List<Outcome> outcomes =
          race(
              24,
              () -> {
                ScopedKey id = key("k-flood-" + UUID.randomUUID());
                return limited.execute(
                    new IdempotentRequest(id, command("10.00"), TTL), pay(id, "{}"));
              });

      assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(5);
      assertThat(outcomes)
          .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
          .hasSize(19)
          .allSatisfy(
              o -> {
                Outcome.QuotaExceeded q = (Outcome.QuotaExceeded) o;
                assertThat(q.quota()).isEqualTo("new_keys");
                assertThat(q.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(60));
              });
      ScopedKey admitted = key("k-flood-admitted");
      clock.advance(Duration.ofMinutes(1));
      limited.syncQuotas(); // the store's clock, read by the background exchange
      assertThat(
              limited.execute(
                  new IdempotentRequest(admitted, command("10.00"), TTL), pay(admitted, "{}")))
          .as("a new minute")
          .isInstanceOf(Outcome.Executed.class);
      for (int i = 0; i < 10; i++) {
        assertThat(
                limited.execute(
                    new IdempotentRequest(admitted, command("10.00"), TTL), pay(admitted, "{}")))
            .as("retries of a key with a record are never refused")
            .isInstanceOf(Outcome.Replayed.class);
      }
    }

    @Test
    void aFloodOfPhasedOperationsNeverExceedsTheLiveRecordsQuota() throws Exception {
      Idempotency limited =
          Idempotency.create(
              store,
              IdempotencyConfig.builder()
                  .lease(LEASE)
                  .defaultTtl(TTL)
                  .quotas(new Quotas(0, 3))
                  .build());
      limited.syncQuotas();
      CountDownLatch release = new CountDownLatch(1);
      AtomicInteger calls = new AtomicInteger();
      List<ScopedKey> keys = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        keys.add(key("k-live-" + i));
      }
      // Eight first transactions at a time reach the end of their local work together, so their
      // admissions really meet; only the count's lock keeps them from all seeing room for one more.
      java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(8);
      PhasedOperation<Map<String, String>> slowCall =
          PhasedOperation.builder()
              .local(
                  "CREATED",
                  (ctx, d) -> {
                    try {
                      together.await(2, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.BrokenBarrierException
                        | java.util.concurrent.TimeoutException lateOrAlone) {
                      // fewer than eight at once here: they race all the same
                    }
                    return Step.next(d);
                  })
              .external(
                  "CHARGED",
                  call ->
                      call.call(
                              (ctx, d) -> {
                                calls.incrementAndGet();
                                release.await(30, TimeUnit.SECONDS); // live until released
                                return CallResult.applied(d);
                              })
                          .farSideDeduplicatesByKey())
              .complete(answers("{}"));
      AtomicInteger next = new AtomicInteger();
      AtomicInteger answered = new AtomicInteger();
      Future<List<Outcome>> flood =
          pool.submit(
              () ->
                  race(
                      16,
                      () -> {
                        ScopedKey id = keys.get(next.getAndIncrement());
                        Outcome o =
                            limited.execute(
                                new IdempotentRequest(id, command("10.00"), TTL), slowCall);
                        answered.incrementAndGet();
                        return o;
                      }));
      // The refused answer at once; the admitted wait in their call until released (on a busy
      // machine the refusals can all be answered before the admitted reach their call).
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while ((answered.get() < 13 || calls.get() < 3) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      int callsWhileFull = calls.get();
      release.countDown();
      List<Outcome> outcomes = flood.get(60, TimeUnit.SECONDS);

      assertThat(callsWhileFull).as("live at once").isEqualTo(3);
      assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(3);
      assertThat(outcomes)
          .filteredOn(o -> o instanceof Outcome.QuotaExceeded)
          .hasSize(13)
          .allSatisfy(
              o -> assertThat(((Outcome.QuotaExceeded) o).quota()).isEqualTo("live_records"));
      assertThat(keys.stream().filter(k -> store.find(k).isPresent()).count())
          .as("a refused key leaves no record")
          .isEqualTo(3);
    }

    /**
     * Two instances (two engines on one store) count alone between exchanges, each up to the limit:
     * the overshoot docs/contract.md states. After each has written its count and read the other's,
     * both refuse new keys beyond the limit; a retry of an admitted key is still answered.
     */
    @Test
    void twoInstancesShareTheirNewKeysThroughTheStoreAfterAnExchange() throws Exception {
      IdempotencyConfig config =
          IdempotencyConfig.builder().lease(LEASE).defaultTtl(TTL).quotas(new Quotas(8, 0)).build();
      Idempotency a = Idempotency.create(store, config);
      Idempotency b = Idempotency.create(store, config);
      a.syncQuotas();
      b.syncQuotas();
      List<ScopedKey> admitted = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        for (Idempotency instance : List.of(a, b)) {
          ScopedKey id = key("k-shared-" + UUID.randomUUID());
          if (instance.execute(new IdempotentRequest(id, command("10.00"), TTL), pay(id, "{}"))
              instanceof Outcome.Executed) {
            admitted.add(id);
          }
        }
      }
      assertThat(admitted)
          .as("no exchange yet: each instance admits alone, 8 + the other's 5 at most")
          .hasSizeBetween(10, 13);

      a.syncQuotas(); // writes a's count
      b.syncQuotas(); // writes b's, reads a's
      a.syncQuotas(); // reads b's
      for (Idempotency instance : List.of(a, b)) {
        ScopedKey id = key("k-shared-late-" + UUID.randomUUID());
        assertThat(
                instance.execute(new IdempotentRequest(id, command("10.00"), TTL), pay(id, "{}")))
            .as("the tenant's minute is full on every instance after the exchange")
            .isInstanceOfSatisfying(
                Outcome.QuotaExceeded.class, q -> assertThat(q.quota()).isEqualTo("new_keys"));
      }
      ScopedKey first = admitted.get(0);
      assertThat(b.execute(new IdempotentRequest(first, command("10.00"), TTL), pay(first, "{}")))
          .as("a retry of an admitted key is never refused")
          .isInstanceOf(Outcome.Replayed.class);

      clock.advance(Duration.ofMinutes(1));
      a.syncQuotas();
      ScopedKey next = key("k-shared-next-minute");
      assertThat(a.execute(new IdempotentRequest(next, command("10.00"), TTL), pay(next, "{}")))
          .as("a new minute")
          .isInstanceOf(Outcome.Executed.class);
    }

    /**
     * The live records of one instance reach the other through the store's count: once an exchange
     * has counted them, the other instance refuses a phased operation that would stay live beyond
     * the limit, and admits again once they ended and an exchange saw it.
     */
    @Test
    void anotherInstancesLiveRecordsCountAfterAnExchange() throws Exception {
      IdempotencyConfig config =
          IdempotencyConfig.builder().lease(LEASE).defaultTtl(TTL).quotas(new Quotas(0, 2)).build();
      Idempotency a = Idempotency.create(store, config);
      Idempotency b = Idempotency.create(store, config);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch calling = new CountDownLatch(2);
      PhasedOperation<Map<String, String>> held =
          PhasedOperation.builder()
              .local("CREATED", (ctx, d) -> Step.next(d))
              .external(
                  "CHARGED",
                  call ->
                      call.call(
                              (ctx, d) -> {
                                calling.countDown();
                                release.await(30, TimeUnit.SECONDS);
                                return CallResult.applied(d);
                              })
                          .farSideDeduplicatesByKey())
              .complete(answers("{}"));
      List<Future<Outcome>> running = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        ScopedKey id = key("k-live-a-" + i);
        running.add(
            pool.submit(() -> a.execute(new IdempotentRequest(id, command("1"), TTL), held)));
      }
      assertThat(calling.await(30, TimeUnit.SECONDS)).isTrue();
      b.syncQuotas();
      ScopedKey refused = key("k-live-b");
      assertThat(b.execute(new IdempotentRequest(refused, command("1"), TTL), held))
          .as("a's two live records fill the tenant's places")
          .isInstanceOfSatisfying(
              Outcome.QuotaExceeded.class, q -> assertThat(q.quota()).isEqualTo("live_records"));
      release.countDown();
      for (Future<Outcome> f : running) {
        assertThat(f.get(30, TimeUnit.SECONDS)).isInstanceOf(Outcome.Executed.class);
      }
      b.syncQuotas();
      assertThat(b.execute(new IdempotentRequest(refused, command("1"), TTL), held))
          .as("the places are free again after an exchange")
          .isInstanceOf(Outcome.Executed.class);
    }
  }
}
