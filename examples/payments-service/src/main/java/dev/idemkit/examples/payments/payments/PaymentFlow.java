package dev.idemkit.examples.payments.payments;

import dev.idemkit.CallResult;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperationContext;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.PhasedOperation;
import dev.idemkit.Step;
import dev.idemkit.spring.boot.RecoverableOperation;
import dev.idemkit.spring.boot.StoredResponses;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * A payment as atomic phases (contract §5, docs/contract.md), read top to bottom as its state
 * machine: {@code PROVIDER_REQUEST_SENT → (provider call) → COMPLETED} or {@code DECLINED}. Two
 * commits: the claim, the local payment and the marker that says the provider call may be under way
 * commit together before the call (so the payment is born {@code PROVIDER_REQUEST_SENT}: nobody can
 * see it before its request may be sent); the provider's answer, the payment's outcome, its event
 * and the idempotency record's completion commit together after it. The provider call carries
 * {@code provider_payment_<paymentId>}, derived from the durable local id, so calling again, or
 * asking, can never charge twice.
 */
@Component
public class PaymentFlow implements RecoverableOperation {

  private static final Logger log = LoggerFactory.getLogger(PaymentFlow.class);

  /** The operation name. */
  public static final String OPERATION = "create_payment";

  /**
   * What the phases keep with the recovery point, so that whoever resumes the payment after a crash
   * can go on: the local payment and, once the provider answered, its charge.
   */
  public record Progress(
      UUID paymentId, String amount, String currency, String chargeId, String chargeStatus) {

    Progress charged(ProviderClient.Charge charge) {
      return new Progress(paymentId, amount, currency, charge.chargeId(), charge.status());
    }

    boolean declined() {
      return "DECLINED".equals(chargeStatus);
    }
  }

  private final PaymentRepository payments;
  private final ProviderClient provider;
  private final StoredResponses responses;

  public PaymentFlow(
      PaymentRepository payments, ProviderClient provider, StoredResponses responses) {
    this.payments = payments;
    this.provider = provider;
    this.responses = responses;
  }

  @Override
  public String operation() {
    return OPERATION;
  }

  /** The phases of a new payment request. */
  public PhasedOperation<Progress> newPayment(String tenant, CreatePaymentRequest request) {
    return phases(tenant, request);
  }

  /**
   * Resumes a payment from its recovery point. The request itself is not stored: a payment that
   * never got past its first commit left nothing to resume, and is left for the client's retry.
   */
  @Override
  public PhasedOperation<Progress> resume(IdempotencyRecord record) {
    return phases(record.id().tenant(), null);
  }

  private PhasedOperation<Progress> phases(String tenant, CreatePaymentRequest request) {
    return PhasedOperation.builder(Progress.class)
        .local("LOCAL_PAYMENT_CREATED", (ctx, none) -> createLocalPayment(ctx, tenant, request))
        .external(
            "PROVIDER_CONFIRMED",
            provider ->
                provider
                    .call((ctx, p) -> charge(p))
                    .lookup(this::lookUpCharge)
                    .afterCall((ctx, p) -> recordAnswer(tenant, p)))
        .complete((ctx, p) -> complete(tenant, p));
  }

  private Step<Progress> createLocalPayment(
      OperationContext ctx, String tenant, CreatePaymentRequest request) {
    if (request == null) {
      throw new IllegalStateException(
          "No local payment was created before the owner stopped; the client's retry runs it");
    }
    Optional<PaymentResponse> created =
        payments.create(tenant, ctx.id().key().value(), request, "PROVIDER_REQUEST_SENT");
    if (created.isEmpty()) {
      String existing =
          payments
              .findIdByBusinessKey(tenant, request.accountId(), request.merchantReference())
              .orElse("unknown");
      return Step.answer(
          OperationResult.rejected(
              responses.problem(PaymentErrors.paymentAlreadyExists(existing, request))));
    }
    PaymentResponse payment = created.get();
    return Step.next(
        new Progress(
            UUID.fromString(payment.paymentId()),
            payment.amount(),
            payment.currency(),
            null,
            null));
  }

  /** The provider's idempotency key: derived from the durable local payment id, never minted. */
  public static String providerKey(UUID paymentId) {
    return "provider_payment_" + paymentId;
  }

  private CallResult<Progress> charge(Progress p) throws InterruptedException {
    ProviderClient.Attempt attempt =
        provider.charge(
            providerKey(p.paymentId()), p.amount(), p.currency(), p.paymentId().toString());
    if (attempt instanceof ProviderClient.Attempt.Answered answered) {
      return CallResult.applied(p.charged(answered.charge()));
    }
    if (attempt instanceof ProviderClient.Attempt.NotCharged notCharged) {
      return CallResult.notApplied(notCharged.reason());
    }
    String reason = ((ProviderClient.Attempt.Unknown) attempt).reason();
    log.info(
        "Payment {}: the provider's answer to charge {} was lost ({}); outcome unknown until"
            + " recovery asks the provider",
        p.paymentId(),
        providerKey(p.paymentId()),
        reason);
    return CallResult.unknown(reason);
  }

  /**
   * After a lost answer: ask the provider what it did under the derived key, unless an operator
   * already said (after recovery gave up): applied with the charge id they found, or not applied.
   */
  private CallResult<Progress> lookUpCharge(OperationContext ctx, Progress p)
      throws InterruptedException {
    Optional<OperatorResolution> verdict = ctx.operatorResolution();
    if (verdict.isPresent()) {
      return verdict.get().applied()
          ? CallResult.applied(
              p.charged(new ProviderClient.Charge(verdict.get().externalReference(), "SUCCEEDED")))
          : CallResult.notApplied("an operator found no charge at the provider");
    }
    ProviderClient.Lookup lookup = provider.lookup(providerKey(p.paymentId()));
    String after = sinceCreated(p.paymentId());
    if (lookup instanceof ProviderClient.Lookup.Found found) {
      log.info(
          "Payment {}: recovered after a lost answer, {} after it was created: the provider had"
              + " {} it ({}) under {}",
          p.paymentId(),
          after,
          found.charge().declined() ? "declined" : "charged",
          found.charge().chargeId(),
          providerKey(p.paymentId()));
      return CallResult.applied(p.charged(found.charge()));
    }
    if (lookup instanceof ProviderClient.Lookup.NoCharge) {
      log.info(
          "Payment {}: recovered after a lost answer, {} after it was created: the provider never"
              + " charged {}, so charging it again is safe",
          p.paymentId(),
          after,
          providerKey(p.paymentId()));
      return CallResult.notApplied("the provider never charged this payment");
    }
    return CallResult.unknown(((ProviderClient.Lookup.Unavailable) lookup).reason());
  }

  private String sinceCreated(UUID id) {
    try {
      Duration age = Duration.between(Instant.parse(payments.get(id).createdAt()), Instant.now());
      return age.toMillis() < 10_000
          ? String.format(Locale.ROOT, "%.1f s", age.toMillis() / 1000.0)
          : age.truncatedTo(ChronoUnit.SECONDS).toString().substring(2).toLowerCase(Locale.ROOT);
    } catch (RuntimeException e) {
      return "some time";
    }
  }

  /**
   * The provider answered. A decline ends the payment right here: {@code DECLINED}, its {@code
   * PaymentDeclined} event and a 402 that every retry gets, committed with the answer.
   */
  private Step<Progress> recordAnswer(String tenant, Progress p) {
    if (!p.declined()) {
      return Step.next(p);
    }
    payments.recordOutcome(tenant, p.paymentId(), true, p.chargeId());
    return Step.answer(
        OperationResult.rejected(responses.problem(PaymentErrors.paymentDeclined(p.paymentId()))));
  }

  /**
   * The last step, committed with the provider's answer: completes the payment, appends {@code
   * PaymentCompleted} and completes the idempotency record.
   */
  private OperationResult complete(String tenant, Progress p) {
    PaymentResponse payment = payments.recordOutcome(tenant, p.paymentId(), false, p.chargeId());
    return OperationResult.success(
        responses
            .json(201, payment, "/v1/payments/" + p.paymentId())
            .withResourceId(p.paymentId().toString()));
  }
}
