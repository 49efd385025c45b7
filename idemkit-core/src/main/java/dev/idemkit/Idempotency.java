package dev.idemkit;

import dev.idemkit.internal.IdempotencyEngine;
import dev.idemkit.spi.IdempotencyStore;
import java.util.Optional;

/**
 * The entry point: runs operations so that a retried request has the effect of one request and gets
 * the answer of the first.
 *
 * <pre>{@code
 * Idempotency idempotency = Idempotency.create(store, IdempotencyConfig.builder().build());
 * Outcome outcome = idempotency.execute(
 *     new IdempotentRequest(ScopedKey.of("tenant-a", "create_payment", key), fingerprint, ttl),
 *     ctx -> OperationResult.success(insertPayment(ctx.unwrap(Connection.class))));
 * }</pre>
 *
 * <p>Thread-safe; one instance serves every request.
 */
public interface Idempotency {

  /**
   * The engine on {@code store} with {@code config}.
   *
   * @throws IllegalArgumentException if {@code store} lacks a capability {@code config} needs,
   *     naming the missing interface: a recovery schedule needs {@link
   *     dev.idemkit.spi.RecoveryAdministration}, quotas need {@link dev.idemkit.spi.QuotaSync}
   *     ({@link IdempotencyStore#capability})
   */
  static Idempotency create(IdempotencyStore store, IdempotencyConfig config) {
    return new IdempotencyEngine(store, config);
  }

  static Idempotency create(IdempotencyStore store) {
    return create(store, IdempotencyConfig.builder().build());
  }

  /**
   * Runs {@code operation} for {@code request} at most once per scoped key and fingerprint, and
   * answers as the contract's table says: executed, replayed, in progress, mismatch, pending.
   *
   * @throws OperationFailedException if the operation ended without an answer: it failed
   *     unexpectedly, or an external call said {@link CallResult.NotApplied} (nothing happened on
   *     the far side). {@link OperationFailedException#recordState()} says how the record was left:
   *     a retry runs again or resumes.
   * @throws LostOwnershipException if another owner took over while this one ran
   */
  Outcome execute(IdempotentRequest request, Operation operation);

  /** Runs a single-transaction operation; lets a lambda stand for it. */
  default Outcome execute(IdempotentRequest request, LocalOperation operation) {
    return execute(request, (Operation) operation);
  }

  /** Same as {@link #execute(IdempotentRequest, Operation)} with the default expiry window. */
  default Outcome execute(ScopedKey id, Fingerprint fingerprint, Operation operation) {
    return execute(new IdempotentRequest(id, fingerprint, config().defaultTtl()), operation);
  }

  /**
   * Recovers a record that needs it (its owner died, or a downstream outcome is unknown): takes it
   * over if it is live and its lease ran out, and resumes {@code operation} from the recovery
   * point. For recovery workers: several may race, and one conditional write picks one.
   *
   * @return the outcome of the resumed run, or empty if the record needs no recovery now (gone,
   *     finished, or owned by a live lease)
   */
  Optional<Outcome> recover(ScopedKey id, PhasedOperation<?> operation);

  /**
   * {@link #execute(IdempotentRequest, Operation)} for a key that may finish an operation but not
   * start one: if the key has a record that still answers (live, or finished within its window),
   * the request gets what {@code execute} gives (a replay, in progress, a mismatch, a takeover that
   * resumes, a retryable failure run again); it never makes a record. Empty when the key has none,
   * or only one whose window has passed. A claim of the key that another transaction has not
   * committed yet is waited for, as {@code execute} waits for it, so a record being made is never
   * taken for none. For a key whose own validity ended (a server-issued key past its expiry): the
   * operation made with it is still answered, and nothing new starts under it.
   *
   * @throws OperationFailedException as {@link #execute(IdempotentRequest, Operation)}
   * @throws LostOwnershipException as {@link #execute(IdempotentRequest, Operation)}
   */
  Optional<Outcome> executeExisting(IdempotentRequest request, Operation operation);

  /** Same as {@link #execute(ScopedKey, Fingerprint, Operation)}; lets a lambda stand for it. */
  default Outcome execute(ScopedKey id, Fingerprint fingerprint, LocalOperation operation) {
    return execute(id, fingerprint, (Operation) operation);
  }

  IdempotencyConfig config();

  /**
   * Shares this instance's quota counts with the other instances through the store, and takes
   * theirs ({@link Quotas}): one exchange, a transaction of its own. Admissions never wait for it;
   * they are decided in memory against the counts of the last exchange. Run it about once a second
   * from one background thread (the Spring Boot starter's quota worker does); the interval is a
   * term of the quotas' bound. Does nothing without quotas. With quotas, the store shares counts
   * through its {@link dev.idemkit.spi.QuotaSync} capability, which {@link #create} requires.
   */
  void syncQuotas();
}
