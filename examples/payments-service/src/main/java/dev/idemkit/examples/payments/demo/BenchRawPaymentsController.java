package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.payments.CreatePaymentRequest;
import dev.idemkit.examples.payments.payments.PaymentFlow;
import dev.idemkit.examples.payments.payments.PaymentRepository;
import dev.idemkit.examples.payments.payments.PaymentResponse;
import dev.idemkit.examples.payments.payments.PaymentsController;
import dev.idemkit.examples.payments.payments.ProviderClient;
import dev.idemkit.examples.payments.web.ApiGateFilter;
import dev.idemkit.examples.payments.web.Errors;
import jakarta.validation.Valid;
import java.net.URI;
import java.security.Principal;
import java.util.UUID;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmark's baseline, and nothing else: {@code POST /v1/bench/payments-raw} does the business
 * work of {@link PaymentsController#create} ({@link PaymentFlow}) without the idempotency layer, so
 * {@code bench/http} can measure what the layer costs on a real HTTP request. It is under {@code
 * /v1/}, so it passes the same {@link ApiGateFilter} (authentication) as the real endpoint.
 *
 * <p>Same request type and validation, and the same statements in the same transactions as the
 * flow's phases: the payment and its outbox event ({@link PaymentRepository#create}); the status
 * {@code PROVIDER_REQUEST_SENT}; the provider charge under the same derived key, over HTTP, after
 * reading the payment; {@code PROVIDER_CONFIRMED} with the charge id; {@code COMPLETED}, then the
 * payment read back and answered 201 with {@code Location} and the same JSON. What it leaves out is
 * exactly the layer: no idempotency record (no claim, no lease renewals, no recovery points, no
 * phase history, no stored answer), hence no replay and no recovery: a failure leaves the payment
 * where it stopped, and a retry pays again. Provider faults ({@code X-Provider-Fault}) are not
 * supported.
 *
 * <p>It exists only under the Spring profile {@code bench}; a service started without that profile
 * has no such endpoint. Never expose it.
 */
@RestController
@Profile("bench")
public class BenchRawPaymentsController {

  private final PaymentRepository payments;
  private final ProviderClient provider;
  private final TransactionTemplate transaction;

  public BenchRawPaymentsController(
      PaymentRepository payments, ProviderClient provider, PlatformTransactionManager manager) {
    this.payments = payments;
    this.provider = provider;
    this.transaction = new TransactionTemplate(manager);
  }

  /** {@link PaymentFlow}'s business work, step by step, with no idempotency record. */
  @PostMapping(path = "/v1/bench/payments-raw", consumes = "application/json")
  public ResponseEntity<?> create(
      Principal tenant, @Valid @RequestBody CreatePaymentRequest request) throws Exception {
    String owner = tenant.getName();
    PaymentResponse created =
        transaction.execute(
            status -> payments.create(owner, request, "LOCAL_PAYMENT_CREATED").orElse(null));
    if (created == null) {
      throw alreadyExists(owner, request);
    }
    UUID id = UUID.fromString(created.paymentId());
    transaction.executeWithoutResult(
        status -> payments.setStatus(id, "PROVIDER_REQUEST_SENT", null));

    PaymentResponse toCharge = payments.get(id);
    ProviderClient.Attempt attempt =
        provider.charge(
            PaymentFlow.providerKey(id),
            toCharge.amount(),
            toCharge.currency(),
            id.toString(),
            null);
    if (!(attempt instanceof ProviderClient.Attempt.Answered answered)) {
      throw new IllegalStateException("The provider did not answer: " + attempt);
    }
    ProviderClient.Charge charge = answered.charge();
    transaction.executeWithoutResult(
        status ->
            payments.setStatus(
                id, charge.declined() ? "DECLINED" : "PROVIDER_CONFIRMED", charge.chargeId()));

    if (charge.declined()) {
      ProblemDetail problem =
          Errors.problem(
              HttpStatus.PAYMENT_REQUIRED,
              "PAYMENT_DECLINED",
              "Payment declined",
              "The provider declined payment "
                  + id
                  + ". Nothing was charged; use another means of payment with a new key.");
      problem.setProperty("paymentId", id.toString());
      return ResponseEntity.status(HttpStatus.PAYMENT_REQUIRED).body(problem);
    }
    PaymentResponse payment =
        transaction.execute(
            status -> {
              payments.setStatus(id, "COMPLETED", charge.chargeId());
              return payments.get(id);
            });
    return ResponseEntity.created(URI.create("/v1/payments/" + id)).body(payment);
  }

  /** The same 409 as {@link PaymentFlow}: the merchant reference already has a payment. */
  private ErrorResponseException alreadyExists(String tenant, CreatePaymentRequest request) {
    String existing =
        payments
            .findIdByBusinessKey(tenant, request.accountId(), request.merchantReference())
            .orElse("unknown");
    return new ErrorResponseException(
        HttpStatus.CONFLICT, Errors.paymentAlreadyExists(existing, request), null);
  }
}
