package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.Outcome;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.RecoveryBackoff;
import dev.idemkit.spi.StoreCapabilities;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes what nobody is finishing: every {@code interval}, up to {@code batchSize} records whose
 * owner died ({@code IN_PROGRESS}, lease run out) or whose downstream outcome is unknown are taken
 * over and resumed from their recovery point, which asks the far side by the derived key before
 * anything else. Safe with any number of instances: each takeover is one conditional write, so each
 * record is recovered by one of them at a time.
 */
public class IdempotencyRecoveryWorker extends PollingLifecycle {

  private static final Logger log = LoggerFactory.getLogger(IdempotencyRecoveryWorker.class);

  private final Idempotency idempotency;
  private final IdempotencyStore store;
  private final Map<String, RecoverableOperation> operations;
  private final int batchSize;
  private final IdemkitProperties.Recovery backoff;

  /** The store's recovery administration, with a {@code backoff}; else null. */
  private final RecoveryAdministration administration;

  private final IdempotencyListener listener;

  /** What one pass did. */
  public record Pass(int found, int recovered, int stillPending, int failed) {}

  public IdempotencyRecoveryWorker(
      Idempotency idempotency,
      IdempotencyStore store,
      List<RecoverableOperation> operations,
      Duration interval,
      int batchSize) {
    this(idempotency, store, operations, interval, batchSize, null, IdempotencyListener.NONE);
  }

  /**
   * A worker that also spaces out the attempts on an outcome that stays unknown and escalates it to
   * an operator after {@code backoff.getMaxAttempts()} (see {@link
   * RecoveryAdministration#backOffRecovery}).
   *
   * @throws IllegalArgumentException with a {@code backoff}, if {@code store} lacks the {@link
   *     RecoveryAdministration} capability
   */
  public IdempotencyRecoveryWorker(
      Idempotency idempotency,
      IdempotencyStore store,
      List<RecoverableOperation> operations,
      Duration interval,
      int batchSize,
      IdemkitProperties.Recovery backoff,
      IdempotencyListener listener) {
    super("idemkit-recovery", interval, interval);
    // A zero batch size would find no record on any pass (recovery silently off), a zero interval
    // would run passes back to back.
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("idemkit.recovery.interval must be positive: " + interval);
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException(
          "idemkit.recovery.batch-size must be positive: " + batchSize);
    }
    this.backoff = backoff;
    this.administration =
        backoff == null
            ? null
            : StoreCapabilities.require(
                store,
                RecoveryAdministration.class,
                "the recovery worker's backoff (idemkit.recovery.*)");
    this.listener = listener;
    this.idempotency = idempotency;
    this.store = store;
    this.operations =
        operations.stream()
            .collect(Collectors.toMap(RecoverableOperation::operation, Function.identity()));
    this.batchSize = batchSize;
  }

  /** One pass, now. */
  public Pass recoverOnce() {
    // Only records this worker can resume: others would fill every batch and starve the rest.
    List<IdempotencyRecord> due = store.findNeedingRecovery(batchSize, operations.keySet());
    int recovered = 0;
    int pending = 0;
    int failed = 0;
    for (IdempotencyRecord record : due) {
      RecoverableOperation operation = operations.get(record.id().operation());
      if (operation == null) {
        continue;
      }
      try {
        Optional<Outcome> outcome = idempotency.recover(record.id(), operation.resume(record));
        if (outcome.isEmpty()) {
          continue;
        }
        if (outcome.get() instanceof Outcome.OutcomePending) {
          pending++;
          backOff(record);
          log.debug("Recovery of {}: the downstream outcome is still unknown", record.id());
        } else {
          recovered++;
          log.info(
              "Recovery of {} {}, {} after its first request",
              record.id(),
              resolution(outcome.get()),
              Duration.between(record.createdAt(), Instant.now())
                  .truncatedTo(ChronoUnit.MILLIS)
                  .toString()
                  .substring(2)
                  .toLowerCase(Locale.ROOT));
        }
      } catch (LostOwnershipException e) {
        log.info("Recovery of {} lost its lease to another owner", record.id());
      } catch (RecordUnreadableException e) {
        // Its recovery data cannot be opened (a destroyed or missing key, or tampering): trying
        // again every pass cannot help. It is spaced out like an unknown outcome, and waits for an
        // operator after the last attempt.
        failed++;
        log.warn(
            "Recovery of {} cannot read the record ({}): {}; retried later, and left to an operator"
                + " after the last attempt",
            record.id(),
            e.reason(),
            e.getMessage());
        backOff(record);
      } catch (RuntimeException e) {
        failed++;
        log.warn(
            "Recovery of {} failed; it is retried on the recovery schedule: {}",
            record.id(),
            e.toString());
        // A step that failed after the call leaves the outcome unrecorded, and a local phase that
        // failed after an external effect leaves the operation unfinished, as unknown: the next
        // attempt waits like one after an unknown outcome, and the last allowed one escalates
        // (a record left otherwise is not touched).
        try {
          backOff(record);
        } catch (RuntimeException backOffFailed) {
          log.debug("Could not space out the next recovery of {}", record.id(), backOffFailed);
        }
      }
    }
    return new Pass(due.size(), recovered, pending, failed);
  }

  /**
   * The attempt left the outcome unknown: the next one waits longer, and after the last allowed one
   * the record waits for an operator. The store's write is conditional on nobody owning the record,
   * so a client retry that took it over in between is left alone.
   */
  private void backOff(IdempotencyRecord record) {
    if (backoff == null) {
      return;
    }
    RecoveryBackoff done =
        administration.backOffRecovery(
            record.id(), backoff.getBackoff(), backoff.getMaxBackoff(), backoff.getMaxAttempts());
    if (done == RecoveryBackoff.ESCALATED) {
      listener.onEscalated(record.id());
      log.warn(
          "{}: {} after {} recovery attempts; automatic recovery stopped. An operator must resolve"
              + " it (applied, with the external reference, or not applied): see the admin API.",
          record.id(),
          record.pendingExternal() != null
              ? "the outcome of external step " + record.pendingExternal() + " is still unknown"
              : "the local phase after " + record.recoveryPoint() + " still fails",
          backoff.getMaxAttempts());
    }
  }

  /** What a recovery ended with, for the log. */
  private static String resolution(Outcome outcome) {
    return outcome.accept(
        new Outcome.Visitor<>() {
          @Override
          public String executed(Outcome.Executed executed) {
            return "completed the operation (answer " + executed.response().status() + ")";
          }

          @Override
          public String rejected(Outcome.Rejected rejected) {
            return "ended the operation with its refusal (answer "
                + rejected.response().status()
                + ")";
          }

          @Override
          public String replayed(Outcome.Replayed replayed) {
            return "found the operation already finished";
          }

          @Override
          public String inProgress(Outcome.InProgress inProgress) {
            return "found another owner running it";
          }

          @Override
          public String mismatch(Outcome.Mismatch mismatch) {
            return "found another command under its key";
          }

          @Override
          public String outcomePending(Outcome.OutcomePending pending) {
            return pending.awaitsOperator()
                ? "left the outcome unknown; it awaits an operator"
                : "left the outcome unknown; it is tried again on the recovery schedule";
          }

          @Override
          public String quotaExceeded(Outcome.QuotaExceeded refused) {
            return "was refused by the " + refused.quota() + " quota";
          }
        });
  }

  @Override
  void runOnce() {
    recoverOnce();
  }

  @Override
  String failedRun() {
    return "Recovery pass failed";
  }

  /** Starts the passes, the first after one interval; none without an operation to resume. */
  @Override
  public void start() {
    if (!operations.isEmpty()) {
      super.start();
    }
  }
}
