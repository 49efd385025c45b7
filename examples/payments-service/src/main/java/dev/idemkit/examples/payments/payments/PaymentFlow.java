package dev.idemkit.examples.payments.payments;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.ExternalEffectNotAppliedException;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperationContext;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.PhasedOperation;
import dev.idemkit.examples.payments.Events;
import dev.idemkit.examples.payments.demo.CrashPoints;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.spring.boot.RecoverableOperation;
import dev.idemkit.spring.boot.StoredResponses;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.stereotype.Component;

/**
 * A payment as atomic phases (contract §5 (docs/contract.md)): {@code RECEIVED →
 * LOCAL_PAYMENT_CREATED → PROVIDER_REQUEST_SENT → PROVIDER_CONFIRMED → COMPLETED}. Each phase is
 * one local transaction that also moves the idempotency record's recovery point; the provider call
 * between phases carries {@code provider_payment_<paymentId>}, derived from the durable local id,
 * so calling again, or asking, can never charge twice.
 */
@Component
public class PaymentFlow implements RecoverableOperation {

  private static final Logger log = LoggerFactory.getLogger(PaymentFlow.class);

  /** The operation name. */
  public static final String OPERATION = "create_payment";

  private final PaymentRepository payments;
  private final ProviderClient provider;
  private final StoredResponses responses;
  private final CrashPoints crash;
  private final Events events;

  public PaymentFlow(
      PaymentRepository payments,
      ProviderClient provider,
      StoredResponses responses,
      CrashPoints crash,
      Events events) {
    this.payments = payments;
    this.provider = provider;
    this.responses = responses;
    this.crash = crash;
    this.events = events;
  }

  @Override
  public String operation() {
    return OPERATION;
  }

  /** The phases of a new payment request; {@code fault} goes to the simulator (demo mode). */
  public PhasedOperation newPayment(String tenant, CreatePaymentRequest request, String fault) {
    return phases(tenant, request, fault);
  }

  /**
   * Resumes a payment from its recovery point. The request itself is not stored: a payment that
   * never got past its claim has nothing to resume, and is left for the client's retry.
   */
  @Override
  public PhasedOperation resume(IdempotencyRecord record) {
    return phases(record.id().tenant(), null, null);
  }

  private PhasedOperation phases(String tenant, CreatePaymentRequest request, String fault) {
    return PhasedOperation.builder()
        .local("LOCAL_PAYMENT_CREATED", ctx -> createLocalPayment(ctx, tenant, request))
        .external(
            "PROVIDER_CONFIRMED",
            ctx -> {
              crash.reached("after-local-payment");
              payments.setStatus(paymentId(ctx), "PROVIDER_REQUEST_SENT", null);
            },
            ctx -> charge(ctx, fault),
            this::lookUpCharge,
            ctx ->
                payments.setStatus(
                    paymentId(ctx),
                    "DECLINED".equals(ctx.data().get("chargeStatus"))
                        ? "DECLINED"
                        : "PROVIDER_CONFIRMED",
                    ctx.data().get("chargeId")))
        .complete(ctx -> complete(ctx, tenant));
  }

  private void createLocalPayment(
      OperationContext ctx, String tenant, CreatePaymentRequest request) {
    if (request == null) {
      throw new IllegalStateException(
          "No local payment was created before the owner stopped; the client's retry runs it");
    }
    Optional<PaymentResponse> created =
        payments.create(tenant, ctx.id().key().value(), request, "LOCAL_PAYMENT_CREATED");
    if (created.isEmpty()) {
      String existing =
          payments
              .findIdByBusinessKey(tenant, request.accountId(), request.merchantReference())
              .orElse("unknown");
      throw new BusinessRejectionException(
          "payment already exists",
          responses.problem(Errors.paymentAlreadyExists(existing, request)));
    }
    ctx.data().put("paymentId", created.get().paymentId());
  }

  /** The provider's idempotency key: derived from the durable local payment id, never minted. */
  public static String providerKey(UUID paymentId) {
    return "provider_payment_" + paymentId;
  }

  private static UUID paymentId(OperationContext ctx) {
    return UUID.fromString(ctx.data().get("paymentId"));
  }

  private void charge(OperationContext ctx, String fault) throws Exception {
    crash.reached("after-request-sent");
    UUID id = paymentId(ctx);
    PaymentResponse payment = payments.get(id);
    ProviderClient.Charge charge;
    try {
      charge =
          provider.charge(
              providerKey(id), payment.amount(), payment.currency(), id.toString(), fault);
    } catch (ExternalEffectNotAppliedException e) {
      throw e;
    } catch (Exception e) {
      log.info(
          "Payment {}: the provider's answer to charge {} was lost ({}); outcome unknown until"
              + " recovery asks the provider",
          id,
          providerKey(id),
          e.getMessage());
      throw e;
    }
    crash.reached("after-provider-charged");
    ctx.data().put("chargeId", charge.chargeId());
    ctx.data().put("chargeStatus", charge.status());
  }

  /**
   * After a lost answer: ask the provider what it did under the derived key, unless an operator
   * already said (after recovery gave up): applied with the charge id they found, or not applied.
   */
  private void lookUpCharge(OperationContext ctx) throws Exception {
    Optional<OperatorResolution> verdict = OperatorResolution.take(ctx);
    if (verdict.isPresent()) {
      if (!verdict.get().applied()) {
        throw new ExternalEffectNotAppliedException("an operator found no charge at the provider");
      }
      ctx.data().put("chargeId", verdict.get().externalReference());
      ctx.data().put("chargeStatus", "SUCCEEDED");
      return;
    }
    UUID id = paymentId(ctx);
    Optional<ProviderClient.Charge> charge = provider.lookup(providerKey(id));
    String after = sinceCreated(id);
    if (charge.isEmpty()) {
      log.info(
          "Payment {}: recovered after a lost answer, {} after it was created: the provider never"
              + " charged {}, so charging it again is safe",
          id,
          after,
          providerKey(id));
      throw new ExternalEffectNotAppliedException("the provider never charged this payment");
    }
    log.info(
        "Payment {}: recovered after a lost answer, {} after it was created: the provider had"
            + " {} it ({}) under {}",
        id,
        after,
        "DECLINED".equals(charge.get().status()) ? "declined" : "charged",
        charge.get().chargeId(),
        providerKey(id));
    ctx.data().put("chargeId", charge.get().chargeId());
    ctx.data().put("chargeStatus", charge.get().status());
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
   * The last phase: one transaction that completes the payment, appends what happened to it ({@code
   * PaymentCompleted} or {@code PaymentDeclined}, after the provider's answer) and completes the
   * idempotency record. The event's id derives from the payment's: a recovery that runs this phase
   * again writes the same event, not a second one.
   */
  private OperationResult complete(OperationContext ctx, String tenant) {
    crash.reached("after-provider-confirmed");
    UUID id = paymentId(ctx);
    if ("DECLINED".equals(ctx.data().get("chargeStatus"))) {
      appendOutcome("PaymentDeclined", tenant, payments.get(id));
      ProblemDetail problem =
          Errors.problem(
              HttpStatus.PAYMENT_REQUIRED,
              "PAYMENT_DECLINED",
              "Payment declined",
              "The provider declined payment "
                  + id
                  + ". Nothing was charged; use another means"
                  + " of payment with a new key.");
      problem.setProperty("paymentId", id.toString());
      return OperationResult.rejected(responses.problem(problem));
    }
    payments.setStatus(id, "COMPLETED", ctx.data().get("chargeId"));
    PaymentResponse payment = payments.get(id);
    appendOutcome("PaymentCompleted", tenant, payment);
    return OperationResult.success(
        responses.json(201, payment, "/v1/payments/" + id).withResourceId(id.toString()));
  }

  private void appendOutcome(String type, String tenant, PaymentResponse payment) {
    events.append(
        type,
        tenant,
        "payment",
        payment.paymentId(),
        "payment:" + payment.paymentId(),
        Map.of(
            "paymentId", payment.paymentId(),
            "accountId", payment.accountId(),
            "amount", payment.amount(),
            "currency", payment.currency()));
  }
}
