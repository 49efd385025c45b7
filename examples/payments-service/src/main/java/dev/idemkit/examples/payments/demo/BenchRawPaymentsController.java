package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.payments.CreatePaymentRequest;
import dev.idemkit.examples.payments.payments.PaymentErrors;
import dev.idemkit.examples.payments.payments.PaymentFlow;
import dev.idemkit.examples.payments.payments.PaymentRepository;
import dev.idemkit.examples.payments.payments.PaymentResponse;
import dev.idemkit.examples.payments.payments.PaymentsController;
import dev.idemkit.examples.payments.payments.ProviderClient;
import dev.idemkit.examples.payments.web.ApiGateFilter;
import jakarta.validation.Valid;
import java.net.URI;
import java.security.Principal;
import java.util.UUID;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmark's baseline, and nothing else: {@code POST /v1/bench/payments-raw} is a payment
 * written the way a service without an idempotency layer would naturally write it, so {@code
 * bench/http} can measure what the layer costs on a real HTTP request. It is under {@code /v1/}, so
 * it passes the same {@link ApiGateFilter} (authentication) as the real endpoint, and takes the
 * same request type and validation as {@link PaymentsController#create}.
 *
 * <p>Two transactions around the provider call, two commits:
 *
 * <ol>
 *   <li>the payment and its {@code PaymentCreated} outbox event ({@link PaymentRepository#create});
 *   <li>the provider charge under the same derived key as {@link PaymentFlow}, over HTTP, outside
 *       any transaction;
 *   <li>the provider's answer recorded: the status ({@code COMPLETED} with the charge id, or {@code
 *       DECLINED}), its {@code PaymentCompleted} or {@code PaymentDeclined} event, and the payment
 *       read back for the 201 with {@code Location} and the same JSON as the real endpoint.
 * </ol>
 *
 * <p>What it leaves out is the layer and what the layer's phases add: no idempotency record (no
 * claim, no lease renewals, no recovery points, no phase history, no stored answer), no separate
 * commit of {@code PROVIDER_REQUEST_SENT} and {@code PROVIDER_CONFIRMED}. Hence no replay and no
 * recovery: a failure leaves the payment where it stopped, and a retry pays again. Provider faults
 * ({@code X-Provider-Fault}) are not supported.
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

  /** A payment in two transactions around the provider call, with no idempotency record. */
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

    ProviderClient.Attempt attempt =
        provider.charge(
            PaymentFlow.providerKey(id), created.amount(), created.currency(), id.toString());
    if (!(attempt instanceof ProviderClient.Attempt.Answered answered)) {
      throw new IllegalStateException("The provider did not answer: " + attempt);
    }
    ProviderClient.Charge charge = answered.charge();

    PaymentResponse payment =
        transaction.execute(
            status -> payments.recordOutcome(owner, id, charge.declined(), charge.chargeId()));
    if (charge.declined()) {
      return ResponseEntity.status(HttpStatus.PAYMENT_REQUIRED)
          .body(PaymentErrors.paymentDeclined(id));
    }
    return ResponseEntity.created(URI.create("/v1/payments/" + id)).body(payment);
  }

  /** The same 409 as {@link PaymentFlow}: the merchant reference already has a payment. */
  private ErrorResponseException alreadyExists(String tenant, CreatePaymentRequest request) {
    String existing =
        payments
            .findIdByBusinessKey(tenant, request.accountId(), request.merchantReference())
            .orElse("unknown");
    return new ErrorResponseException(
        HttpStatus.CONFLICT, PaymentErrors.paymentAlreadyExists(existing, request), null);
  }
}
