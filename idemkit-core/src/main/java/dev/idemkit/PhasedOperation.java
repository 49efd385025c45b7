package dev.idemkit;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An operation with external side effects, run as atomic phases (Stripe's design): each local phase
 * is one transaction that also moves the record's recovery point; an external call sits between
 * phases and must carry its own idempotency key derived from durable local data (e.g. {@code
 * provider_payment_<paymentId>} from {@link OperationContext#data()}). A takeover resumes after the
 * last durable phase, so no phase's effect happens twice.
 *
 * <pre>{@code
 * PhasedOperation op = PhasedOperation.builder()
 *     .local("LOCAL_PAYMENT_CREATED", ctx -> ctx.data().put("paymentId", insertPayment(ctx)))
 *     .external("PROVIDER_CONFIRMED",
 *         ctx -> ctx.data().put("chargeId", provider.charge(providerKey(ctx))),
 *         ctx -> ctx.data().put("chargeId", provider.lookup(providerKey(ctx))),
 *         ctx -> markConfirmed(ctx))
 *     .complete(ctx -> OperationResult.success(paymentResponse(ctx)));
 * }</pre>
 *
 * <p>Failure policy: an exception before any external call starts leaves the record {@code
 * FAILED_RETRYABLE} (the next retry runs again, from the recovery point); a {@link
 * BusinessRejectionException} anywhere stores a replayable rejection; an exception from an external
 * call other than {@link ExternalEffectNotAppliedException} leaves the outcome {@code
 * UNKNOWN_REQUIRES_RECOVERY}; an exception after an external effect is recorded leaves the record
 * {@code IN_PROGRESS} with its lease released, never "failed".
 */
public final class PhasedOperation implements Operation {

  /** Work inside one local transaction. */
  @FunctionalInterface
  public interface LocalStep {
    void run(OperationContext ctx) throws Exception;
  }

  /** A call to the outside world, made outside any transaction. Results go in {@code data()}. */
  @FunctionalInterface
  public interface ExternalCall {
    void call(OperationContext ctx) throws Exception;
  }

  /** One named phase. */
  public sealed interface Phase {
    String name();
  }

  /** A local phase: one transaction that ends with the recovery point at {@code name}. */
  public record Local(String name, LocalStep step) implements Phase {}

  /**
   * An external phase. Before {@code call} starts, the record durably says the call may be under
   * way, in a transaction that also runs {@code prepare} (e.g. marks the payment {@code
   * PROVIDER_REQUEST_SENT}); after it returns, {@code record} runs in the transaction that moves
   * the recovery point to {@code name}. A takeover that finds the call under way runs {@code
   * recover} instead (ask the far side by the derived key), never a second call with a new key.
   */
  public record External(
      String name, LocalStep prepare, ExternalCall call, ExternalCall recover, LocalStep record)
      implements Phase {}

  private final List<Phase> phases;
  private final LocalOperation completion;

  private PhasedOperation(List<Phase> phases, LocalOperation completion) {
    this.phases = List.copyOf(phases);
    this.completion = completion;
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<Phase> phases() {
    return phases;
  }

  /** The last step: one transaction that produces the answer and completes the record. */
  public LocalOperation completion() {
    return completion;
  }

  /** The index of the first phase after {@code recoveryPoint} ({@code null}: before any). */
  public int indexAfter(String recoveryPoint) {
    if (recoveryPoint == null) {
      return 0;
    }
    for (int i = 0; i < phases.size(); i++) {
      if (phases.get(i).name().equals(recoveryPoint)) {
        return i + 1;
      }
    }
    throw new IllegalStateException(
        "Recovery point '" + recoveryPoint + "' names no phase of this operation " + names());
  }

  /** The external phase called {@code name}. */
  public Optional<External> external(String name) {
    return phases.stream()
        .filter(p -> p instanceof External && p.name().equals(name))
        .map(External.class::cast)
        .findFirst();
  }

  /** True if some external phase lies at or before {@code recoveryPoint}: an effect happened. */
  public boolean hasExternalEffectBy(String recoveryPoint) {
    int end = indexAfter(recoveryPoint);
    for (int i = 0; i < end; i++) {
      if (phases.get(i) instanceof External) {
        return true;
      }
    }
    return false;
  }

  private List<String> names() {
    return phases.stream().map(Phase::name).toList();
  }

  /** Builds a phased operation; phase names must be unique. */
  public static final class Builder {
    private final List<Phase> phases = new ArrayList<>();
    private final HashSet<String> names = new HashSet<>();

    private Builder() {}

    public Builder local(String name, LocalStep step) {
      return add(new Local(name, Objects.requireNonNull(step)));
    }

    /** An external phase whose recovery simply calls again (the call must be idempotent). */
    public Builder external(String name, ExternalCall call) {
      return external(name, call, call, ctx -> {});
    }

    public Builder external(
        String name, ExternalCall call, ExternalCall recover, LocalStep record) {
      return external(name, ctx -> {}, call, recover, record);
    }

    /** An external phase whose marker transaction also runs {@code prepare}. */
    public Builder external(
        String name, LocalStep prepare, ExternalCall call, ExternalCall recover, LocalStep record) {
      return add(
          new External(
              name,
              Objects.requireNonNull(prepare),
              Objects.requireNonNull(call),
              Objects.requireNonNull(recover),
              Objects.requireNonNull(record)));
    }

    public PhasedOperation complete(LocalOperation completion) {
      return new PhasedOperation(phases, Objects.requireNonNull(completion));
    }

    private Builder add(Phase phase) {
      Objects.requireNonNull(phase.name(), "name");
      if (phase.name().isBlank() || !names.add(phase.name())) {
        throw new IllegalArgumentException("Phase names must be unique and not blank: " + phase);
      }
      phases.add(phase);
      return this;
    }
  }
}
