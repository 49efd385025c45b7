package dev.idemkit;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * An operation with external side effects, run as atomic phases (contract §5, docs/contract.md).
 * Local phases are work in the database; an external phase is a call to the outside world, made
 * outside any transaction, that must carry its own idempotency key derived from durable local data
 * (e.g. {@code provider_payment_<paymentId>}).
 *
 * <pre>{@code
 * record Payment(UUID paymentId, String chargeId) {}
 *
 * PhasedOperation<Payment> op = PhasedOperation.builder(Payment.class)
 *     .local("LOCAL_PAYMENT_CREATED", (ctx, p) -> Step.next(new Payment(insertPayment(ctx), null)))
 *     .external("PROVIDER_CONFIRMED", call -> call
 *         .call((ctx, p) -> charge(providerKey(p)))        // CallResult: Applied, NotApplied, ...
 *         .lookup((ctx, p) -> findCharge(providerKey(p)))  // after a crash or a lost answer
 *         .afterCall((ctx, p) -> p.declined() ? Step.answer(declined(p)) : Step.next(p)))
 *     .complete((ctx, p) -> OperationResult.success(paymentResponse(ctx, p)));
 * }</pre>
 *
 * <p><b>Two commits per external call.</b> The claim commits with every local phase before the
 * first call and with the call's marker (the record durably says the call may be under way): one
 * transaction, so a failure there rolls everything back, claim included, and a retry runs afresh.
 * After the call, its result commits with the local phases after it and with the next marker or the
 * completion.
 *
 * <p><b>Every external phase says how a takeover learns what its call did.</b> A takeover that
 * finds the marker cannot tell whether the call was made: it learns what happened by the phase's
 * {@link ExternalSteps#lookup lookup} (the call is made only if the lookup says it never was), or,
 * for a phase declared {@link ExternalSteps#farSideDeduplicatesByKey()}, by making the call again
 * under the same key, which the far side answers with the first call's result. A phase that
 * declares neither is refused when it is built; a takeover never makes a call blindly. A record
 * whose pending call names a phase the operation no longer declares (written by an older
 * definition) is left to recovery, its outcome unknown, and in the end to an operator.
 *
 * <p><b>Failure policy</b>, by what a step returns: {@link Step.Answer} ends the operation with
 * that answer; {@link CallResult} kinds are described there. An exception is an unexpected failure:
 * in the first transaction nothing is kept (a retry runs again); from a call or a lookup it means
 * the outcome is unknown; in a transaction after a call, or in a local phase a takeover runs after
 * an external effect, it leaves the record awaiting recovery ({@link
 * RecordState#UNKNOWN_REQUIRES_RECOVERY}): the next attempt asks the far side again if the call's
 * result was not recorded, and goes on, on the recovery schedule, until an operator is asked.
 *
 * @param <D> the phase data: what the phases keep with the recovery point ({@link PhaseData})
 */
public final class PhasedOperation<D> implements Operation {

  /** Work inside one local transaction: go on with new data, or end with an answer. */
  @FunctionalInterface
  public interface LocalStep<D> {
    Step<D> run(OperationContext ctx, D data) throws Exception;
  }

  /** A call to the outside world, or a lookup of an earlier call, made outside any transaction. */
  @FunctionalInterface
  public interface Call<D> {
    CallResult<D> call(OperationContext ctx, D data) throws Exception;
  }

  /** The last step: one transaction that produces the answer and completes the record. */
  @FunctionalInterface
  public interface Completion<D> {
    OperationResult complete(OperationContext ctx, D data) throws Exception;
  }

  /** One named phase. */
  public sealed interface Phase<D> {
    String name();
  }

  /** A local phase, committed with the phases around it up to the next call. */
  public record Local<D>(String name, LocalStep<D> step) implements Phase<D> {}

  /**
   * An external phase: {@code beforeCall} commits with the marker that says the call may be under
   * way; {@code call} runs outside any transaction; {@code afterCall} commits with the call's
   * result. A takeover that finds the call under way runs {@code lookup} first; a phase without one
   * must declare {@code farSideDeduplicatesByKey}, and the takeover then makes the call again
   * ({@link ExternalSteps#farSideDeduplicatesByKey()}). A phase with no call, or with neither a
   * lookup nor the far side's deduplication declared, is refused with an {@link
   * IllegalArgumentException}.
   */
  public record External<D>(
      String name,
      LocalStep<D> beforeCall,
      Call<D> call,
      Optional<Call<D>> lookup,
      boolean farSideDeduplicatesByKey,
      LocalStep<D> afterCall)
      implements Phase<D> {

    public External {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(beforeCall, "beforeCall");
      Objects.requireNonNull(lookup, "lookup");
      Objects.requireNonNull(afterCall, "afterCall");
      if (call == null) {
        throw new IllegalArgumentException("External phase " + name + " declares no call");
      }
      if (lookup.isEmpty() && !farSideDeduplicatesByKey) {
        throw new IllegalArgumentException(
            "External phase "
                + name
                + " does not say how a takeover learns what its call did, so a call that may"
                + " have been made would be made again blindly. Declare .lookup(...) to ask the"
                + " far side what the call under this key did, or .farSideDeduplicatesByKey() if"
                + " the far side answers a repeated call under the same idempotency key with the"
                + " first call's result, without a second effect.");
      }
    }
  }

  private final PhaseData<D> data;
  private final List<Phase<D>> phases;
  private final Completion<D> completion;
  private final boolean claimsFirst;

  private PhasedOperation(
      PhaseData<D> data, List<Phase<D>> phases, Completion<D> completion, boolean claimsFirst) {
    this.data = data;
    this.phases = List.copyOf(phases);
    this.completion = completion;
    this.claimsFirst = claimsFirst;
  }

  /** An operation whose phase data is the record type {@code data} ({@link PhaseData#of}). */
  public static <R extends Record> Builder<R> builder(Class<R> data) {
    return new Builder<>(PhaseData.of(data));
  }

  /** An operation whose phase data {@code data} reads and writes. */
  public static <D> Builder<D> builder(PhaseData<D> data) {
    return new Builder<>(Objects.requireNonNull(data, "data"));
  }

  /** An operation whose phase data is a mutable map of strings. */
  public static Builder<Map<String, String>> builder() {
    return new Builder<>(PhaseData.strings());
  }

  public PhaseData<D> data() {
    return data;
  }

  public List<Phase<D>> phases() {
    return phases;
  }

  public Completion<D> completion() {
    return completion;
  }

  /**
   * Whether the record is claimed ({@code IN_PROGRESS}) before the first local phase runs, in the
   * same transaction, and advanced at the first call's marker. By default it is not: the first
   * transaction runs the local phases and then inserts the record at the marker, its one write of
   * the record (contract §5), and a concurrent duplicate runs those phases too before its insert
   * fails and rolls them back. Claiming first costs a round trip and a row version more per first
   * execution, in exchange for duplicates waiting on the claim (or answered 409 once the store's
   * claim wait runs out) instead of each running the local phases; it suits long local work before
   * the first call. ({@link Builder#claimingFirst()})
   */
  public boolean claimsFirst() {
    return claimsFirst;
  }

  /** Builds a phased operation; phase names must be unique. */
  public static final class Builder<D> {
    private final PhaseData<D> data;
    private final List<Phase<D>> phases = new ArrayList<>();
    private final Set<String> names = new HashSet<>();
    private boolean claimsFirst;

    private Builder(PhaseData<D> data) {
      this.data = data;
    }

    /** Claims the record before the first local phase ({@link PhasedOperation#claimsFirst()}). */
    public Builder<D> claimingFirst() {
      this.claimsFirst = true;
      return this;
    }

    public Builder<D> local(String name, LocalStep<D> step) {
      return add(new Local<>(name, Objects.requireNonNull(step, "step")));
    }

    /**
     * An external phase, declared by its named steps: {@link ExternalSteps#call}, and how a
     * takeover learns what the call did: {@link ExternalSteps#lookup}, or {@link
     * ExternalSteps#farSideDeduplicatesByKey()}.
     *
     * @throws IllegalArgumentException when the phase declares no call, or neither a lookup nor the
     *     far side's deduplication
     */
    public Builder<D> external(String name, UnaryOperator<ExternalSteps<D>> steps) {
      ExternalSteps<D> declared = steps.apply(new ExternalSteps<>());
      return add(
          new External<>(
              name,
              declared.beforeCall,
              declared.call,
              Optional.ofNullable(declared.lookup),
              declared.farSideDeduplicatesByKey,
              declared.afterCall));
    }

    public PhasedOperation<D> complete(Completion<D> completion) {
      return new PhasedOperation<>(
          data, phases, Objects.requireNonNull(completion, "completion"), claimsFirst);
    }

    private Builder<D> add(Phase<D> phase) {
      Objects.requireNonNull(phase.name(), "name");
      if (phase.name().isBlank() || !names.add(phase.name())) {
        throw new IllegalArgumentException("Phase names must be unique and not blank: " + phase);
      }
      phases.add(phase);
      return this;
    }
  }

  /**
   * The named steps of an external phase: the {@link #call}, and how a takeover learns what it did
   * ({@link #lookup}, or {@link #farSideDeduplicatesByKey()}); {@link #beforeCall} and {@link
   * #afterCall} are optional.
   */
  public static final class ExternalSteps<D> {
    private LocalStep<D> beforeCall = (ctx, d) -> Step.next(d);
    private Call<D> call;
    private Call<D> lookup;
    private boolean farSideDeduplicatesByKey;
    private LocalStep<D> afterCall = (ctx, d) -> Step.next(d);

    private ExternalSteps() {}

    /** Local work committed with the marker, before the call (e.g. mark the payment as sent). */
    public ExternalSteps<D> beforeCall(LocalStep<D> step) {
      this.beforeCall = Objects.requireNonNull(step, "beforeCall");
      return this;
    }

    /** The call, under an idempotency key derived from the phase data. */
    public ExternalSteps<D> call(Call<D> call) {
      this.call = Objects.requireNonNull(call, "call");
      return this;
    }

    /**
     * Asks the far side what an earlier call under the same key did, for a takeover that finds the
     * call under way (after a crash, a lost answer, or a failure recording the result): {@code
     * Applied} goes on with its data, {@code NotApplied} makes the call now under the same key,
     * {@code Unknown} leaves the record to recovery. An operator's verdict, if any, is in {@link
     * OperationContext#operatorResolution()}. With a lookup, a takeover never makes the call before
     * the lookup said it was not applied.
     */
    public ExternalSteps<D> lookup(Call<D> lookup) {
      this.lookup = Objects.requireNonNull(lookup, "lookup");
      return this;
    }

    /**
     * Declares that the far side deduplicates a repeated call by the idempotency key it is given: a
     * second call under the same key has no second effect and answers with the first call's result
     * (as a payment provider does for a request under the same {@code Idempotency-Key}, for as long
     * as it keeps that key). A takeover that finds the call under way, with no {@link #lookup},
     * then makes the call again instead of asking; the call is its way of learning, so an
     * operator's verdict, if any, is in {@link OperationContext#operatorResolution()} during that
     * call. Declare it only when it is true of the far side: the key must be derived from durable
     * phase data, never minted per attempt, and the far side must keep it longer than recovery can
     * take. With a lookup as well, the takeover runs the lookup.
     */
    public ExternalSteps<D> farSideDeduplicatesByKey() {
      this.farSideDeduplicatesByKey = true;
      return this;
    }

    /** Local work committed with the call's result (e.g. store the charge id). */
    public ExternalSteps<D> afterCall(LocalStep<D> step) {
      this.afterCall = Objects.requireNonNull(step, "afterCall");
      return this;
    }
  }
}
