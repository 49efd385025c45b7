package dev.idemkit.examples.payments.payments;

import dev.idemkit.DataProtection;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.RecordState;
import dev.idemkit.Scope;
import dev.idemkit.ScopedKey;
import dev.idemkit.examples.payments.shards.Lanes;
import dev.idemkit.examples.payments.web.Errors;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.Takeover;
import dev.idemkit.spi.TransactionWork;
import dev.idemkit.spring.boot.StoredResponses;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Closes payments that failed before the provider charged them and that nobody retried.
 *
 * <p>When the provider fails before charging (a 503, a refused connection), the request's record
 * becomes {@code FAILED_RETRYABLE} while the payment row stays {@code PROVIDER_REQUEST_SENT},
 * holding its merchant reference. The client's retry with the same key resumes that payment (same
 * payment, same provider key {@code provider_payment_<id>}). If no retry comes within {@code
 * payments.abandoned-payment-grace} (default 15 minutes), this sweep closes it: the payment becomes
 * {@code FAILED} (which frees its merchant reference) and the record answers every later retry with
 * 409 {@code PAYMENT_ABANDONED}, in one transaction.
 *
 * <p>Races: the sweep takes the record over with the one conditional write a retry would make
 * ({@link Takeover#RECLAIM_RETRYABLE}, on the fencing token it read before asking the provider), so
 * of a retry and the sweep exactly one gets the record; the loser sees the winner's work (a resumed
 * payment, or the stored 409). A charge needs an owner, and every owner bumps the token, so a
 * provider that said "no charge under this key" before the takeover cannot have charged by the time
 * the takeover succeeds. A payment whose record is live ({@code IN_PROGRESS}, {@code
 * UNKNOWN_REQUIRES_RECOVERY}) belongs to the recovery worker and is never touched here.
 *
 * <p>With shards the sweep runs once per shard, bound to it ({@link Lanes}).
 */
@Component
public class AbandonedPayments {

  private static final Logger log = LoggerFactory.getLogger(AbandonedPayments.class);

  /** Payments looked at per pass. */
  private static final int BATCH = 100;

  private final PaymentRepository payments;
  private final ProviderClient provider;
  private final IdempotencyStore store;
  private final Idempotency idempotency;
  private final StoredResponses responses;
  private final Lanes lanes;
  private final Duration grace;

  public AbandonedPayments(
      PaymentRepository payments,
      ProviderClient provider,
      IdempotencyStore store,
      ObjectProvider<DataProtection> protection,
      Idempotency idempotency,
      StoredResponses responses,
      Lanes lanes,
      @Value("${payments.abandoned-payment-grace:PT15M}") Duration grace) {
    this.payments = payments;
    this.provider = provider;
    // Seen through data protection, like the engine sees it: recovery data and answers in clear.
    this.store = protection.getIfAvailable(DataProtection::none).protect(store);
    this.idempotency = idempotency;
    this.responses = responses;
    this.lanes = lanes;
    this.grace = grace;
  }

  /** How long a payment that failed before charging waits for its client's retry. */
  public Duration grace() {
    return grace;
  }

  @Scheduled(
      initialDelayString = "${payments.abandoned-payment-sweep-interval:PT1M}",
      fixedDelayString = "${payments.abandoned-payment-sweep-interval:PT1M}")
  void sweep() {
    for (String lane : lanes.names()) {
      try {
        int closed = lanes.on(lane, () -> closeAbandoned(null));
        if (closed > 0) {
          log.info("Closed {} abandoned payment(s) the provider never charged", closed);
        }
      } catch (Exception e) {
        log.warn(
            "Abandoned-payment sweep of {} failed; the next one tries again: {}",
            lane,
            e.toString());
      }
    }
  }

  /**
   * One pass.
   *
   * @param asOf the time to judge the grace period by; {@code null}: the database's (tests move
   *     time through this seam)
   * @return how many payments were closed
   */
  public int closeAbandoned(Instant asOf) {
    int closed = 0;
    for (PaymentRepository.Unfinished payment : payments.unfinishedBefore(asOf, grace, BATCH)) {
      try {
        if (close(payment, asOf)) {
          closed++;
        }
      } catch (RuntimeException e) {
        log.warn("Could not close payment {} yet: {}", payment.id(), e.toString());
      }
    }
    return closed;
  }

  private boolean close(PaymentRepository.Unfinished payment, Instant asOf) {
    ScopedKey id =
        new ScopedKey(
            Scope.of(payment.tenant(), PaymentFlow.OPERATION),
            IdempotencyKey.of(payment.idempotencyKey()));
    Optional<Snapshot> seen = inTransaction(tx -> store.read(tx, id));
    IdempotencyRecord record = seen.map(Snapshot::record).orElse(null);
    // The record still speaks for this payment unless it is gone, expired, or was replaced by a
    // new operation after expiry (which made a payment of its own, or was refused).
    boolean owned =
        record != null
            && payment.id().toString().equals(record.recoveryData().get("paymentId"))
            && !record.isExpiredAt(seen.get().now());
    if (owned) {
      Instant now = asOf != null ? asOf : seen.get().now();
      if (record.state() != RecordState.FAILED_RETRYABLE
          || now.isBefore(record.updatedAt().plus(grace))) {
        return false;
      }
    }
    if (!neverCharged(payment)) {
      return false;
    }
    if (!owned) {
      return inTransaction(tx -> payments.closeUncharged(payment.id()));
    }
    return inTransaction(
        tx -> {
          Optional<IdempotencyRecord> mine =
              store.takeOver(
                  tx,
                  seen.get(),
                  Takeover.RECLAIM_RETRYABLE,
                  new NewRecord(id, record.fingerprint(), idempotency.config().defaultTtl()),
                  idempotency.config().lease());
          if (mine.isEmpty()) {
            return false; // a retry took it first and resumes the payment
          }
          if (!payments.closeUncharged(payment.id())) {
            throw new IllegalStateException(
                "payment " + payment.id() + " changed without its record; left as it is");
          }
          store.finish(tx, Ownership.of(mine.get()), FinalAnswer.failed(abandoned(payment)));
          log.info("Closed payment {} ({}): never charged, not retried", payment.id(), id);
          return true;
        });
  }

  /** Asks the provider under the payment's own key; only a definite "no charge" closes it. */
  private boolean neverCharged(PaymentRepository.Unfinished payment) {
    try {
      ProviderClient.Lookup lookup = provider.lookup(PaymentFlow.providerKey(payment.id()));
      if (lookup instanceof ProviderClient.Lookup.Found found) {
        log.warn(
            "Payment {} has a provider charge {} although it failed before charging; left for"
                + " its client's retry",
            payment.id(),
            found.charge().chargeId());
      }
      return lookup instanceof ProviderClient.Lookup.NoCharge;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private dev.idemkit.StoredResponse abandoned(PaymentRepository.Unfinished payment) {
    ProblemDetail problem =
        Errors.problem(
            HttpStatus.CONFLICT,
            "PAYMENT_ABANDONED",
            "Payment abandoned",
            "Payment "
                + payment.id()
                + " failed before the provider charged it and was not retried within "
                + grace
                + ", so it was closed as FAILED. Nothing was charged and its merchant reference is"
                + " free: pay again with a new Idempotency-Key.");
    problem.setProperty("paymentId", payment.id().toString());
    return responses.problem(problem);
  }

  private <T> T inTransaction(TransactionWork<T> work) {
    try {
      return store.inTransaction(work);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
