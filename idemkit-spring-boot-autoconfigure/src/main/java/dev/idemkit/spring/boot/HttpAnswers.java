package dev.idemkit.spring.boot;

import dev.idemkit.LostOwnershipException;
import dev.idemkit.OperationFailedException;
import dev.idemkit.Outcome;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.TransactionSystemException;

/**
 * Every HTTP answer the layer gives of its own, in one place (contract §2, docs/contract.md): what
 * each {@link Outcome} answers, what each failure of a request answers, and the refusals of a
 * request before it reaches the engine, each with its {@link ErrorCode}.
 */
final class HttpAnswers {

  private static final Logger log = LoggerFactory.getLogger(IdempotentMethodInterceptor.class);

  private final IdemkitProperties properties;

  /** The pause before a quota's refusal (idemkit.quota.refusal-pause). */
  private final RefusalPause refusalPause;

  /**
   * Whether the store was found unreachable and not yet reachable again: one WARN per episode,
   * however many requests it fails.
   */
  private final AtomicBoolean storeDown = new AtomicBoolean();

  HttpAnswers(IdemkitProperties properties, RefusalPause refusalPause) {
    this.properties = properties;
    this.refusalPause = refusalPause;
  }

  /** What {@code outcome} answers. */
  ResponseEntity<byte[]> outcome(ScopedKey id, Outcome outcome) {
    return outcome.accept(new Answers(id));
  }

  /** The HTTP answer of each outcome (contract §2). */
  private final class Answers implements Outcome.Visitor<ResponseEntity<byte[]>> {
    private final ScopedKey id;

    Answers(ScopedKey id) {
      this.id = id;
    }

    @Override
    public ResponseEntity<byte[]> executed(Outcome.Executed executed) {
      return ResponseCapture.toEntity(executed.response(), false);
    }

    @Override
    public ResponseEntity<byte[]> rejected(Outcome.Rejected rejected) {
      return ResponseCapture.toEntity(rejected.response(), false);
    }

    @Override
    public ResponseEntity<byte[]> replayed(Outcome.Replayed replayed) {
      log.debug("{}: replayed", id);
      return ResponseCapture.toEntity(replayed.response(), true);
    }

    @Override
    public ResponseEntity<byte[]> inProgress(Outcome.InProgress inProgress) {
      return HttpAnswers.inProgress(inProgress.retryAfter());
    }

    @Override
    public ResponseEntity<byte[]> quotaExceeded(Outcome.QuotaExceeded refused) {
      refusalPause.before(id.tenant(), refused.quota(), refused.retryAfter());
      return HttpAnswers.quotaExceeded(refused);
    }

    @Override
    public ResponseEntity<byte[]> outcomePending(Outcome.OutcomePending pending) {
      if (pending.awaitsOperator()) {
        return Problems.response(
            409,
            ErrorCode.IDEMPOTENCY_OUTCOME_PENDING,
            "Outcome awaits an operator",
            "A downstream call of the first request has an unknown outcome that automatic"
                + " recovery could not settle; it awaits an operator's resolution, which may take a"
                + " while. Nothing will happen twice; retry with the same key after Retry-After"
                + " seconds, never with a new key.",
            pending.retryAfter());
      }
      return Problems.response(
          409,
          ErrorCode.IDEMPOTENCY_OUTCOME_PENDING,
          "Outcome pending",
          "A downstream call of the first request has an unknown outcome and is being recovered."
              + " Nothing will happen twice; retry with the same key after Retry-After seconds.",
          pending.retryAfter());
    }

    @Override
    public ResponseEntity<byte[]> mismatch(Outcome.Mismatch mismatch) {
      log.info("{}: key reused with a different request", id);
      return Problems.response(
          properties.getMismatchStatus(),
          ErrorCode.IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST,
          "Idempotency-Key reused with a different request",
          "This key was already used for a different request to this operation. Use a new key for"
              + " a new operation; retry only with the exact same request.");
    }
  }

  /**
   * The answer to a failure of {@code run}: 503 when the store is unreachable, else {@code failed}.
   */
  ResponseEntity<byte[]> failure(ScopedKey id, Idempotent idempotent, RuntimeException failure)
      throws Throwable {
    if (TenantFence.isCauseOf(failure)) {
      return tenantMoving();
    }
    if (storeUnreachable(failure)) {
      return storeUnavailable(id, failure);
    }
    return failed(id, idempotent, failure);
  }

  /**
   * The store (its database) cannot be reached: the connection was lost, the server is shutting
   * down or failing over. Nothing about this request is known to have been kept, or what was kept
   * resumes, so the answer is the same for all: 503, retry with the same key.
   */
  private ResponseEntity<byte[]> storeUnavailable(ScopedKey id, RuntimeException e) {
    if (storeDown.compareAndSet(false, true)) {
      log.warn(
          "The idempotency store cannot be reached ({}); answering 503 with Retry-After until it"
              + " is back. First request: {}",
          rootMessage(e),
          id);
    } else {
      log.debug("{}: idempotency store unreachable: {}", id, rootMessage(e));
    }
    return Problems.response(
        503,
        ErrorCode.IDEMPOTENCY_STORE_UNAVAILABLE,
        "Idempotency store unavailable",
        "The service cannot reach its database right now. Retry with the same key after"
            + " Retry-After seconds: a request that was not kept runs then, and one that was kept"
            + " is answered or resumed, never run twice.",
        Duration.ofSeconds(1));
  }

  /**
   * The answer while a tenant moves between shards: the directory says so, or the old shard's fence
   * refused the request's write (its transaction rolled back, nothing of it kept).
   */
  static ResponseEntity<byte[]> tenantMoving() {
    return Problems.response(
        503,
        ErrorCode.TENANT_MOVING,
        "Tenant moving",
        "Your account's data is moving between databases. Retry with the same key after"
            + " Retry-After seconds: nothing of this request was kept, and a request already"
            + " answered is answered the same.",
        Duration.ofSeconds(1));
  }

  /**
   * The tenant's shard is in {@code region}: 307, so that the client sends the same request
   * (method, body, key) to {@code location}, its home region's URL for it. Nothing was done here.
   */
  static ResponseEntity<byte[]> tenantHomedElsewhere(String region, String location) {
    return ResponseEntity.status(307)
        .location(URI.create(location))
        .contentType(Problems.PROBLEM_JSON)
        .body(
            Problems.body(
                307,
                ErrorCode.TENANT_HOMED_ELSEWHERE.code(),
                "Tenant homed elsewhere",
                "Your account is served in region "
                    + region
                    + ". Send this request unchanged, with the same Idempotency-Key, to the"
                    + " Location (and your next ones to that region): nothing of it was done"
                    + " here."));
  }

  /**
   * Whether {@code failure} says the store cannot be reached: a lost or refused connection, or a
   * commit or rollback that the transaction manager could not carry out (after a connection was
   * dropped, Spring reports the failed rollback, with the pool's "connection is closed", in place
   * of the dropped connection's error).
   */
  private static boolean storeUnreachable(Throwable failure) {
    if (DatabaseUnreachable.isCauseOf(failure)) {
      return true;
    }
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof TransactionSystemException) {
        return true;
      }
    }
    return false;
  }

  void storeReachable() {
    if (storeDown.compareAndSet(true, false)) {
      log.info("The idempotency store is reachable again");
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + ": " + root.getMessage();
  }

  /** The answer to an engine failure that is not the store being unreachable. */
  private ResponseEntity<byte[]> failed(
      ScopedKey id, Idempotent idempotent, RuntimeException failure) throws Throwable {
    if (failure instanceof LostOwnershipException) {
      return inProgress(Duration.ofSeconds(1));
    }
    if (failure instanceof RecordUnreadableException unreadable) {
      return unreadable(id, unreadable);
    }
    if (!(failure instanceof OperationFailedException e)) {
      throw failure;
    }
    if (idempotent.phased()) {
      // The engine left the record so that a retry runs again or resumes: say so.
      if (e.getCause() == null) { // a call that was not applied: expected, nothing to explain
        log.info("{}: {} (record left {})", id, e.getMessage(), e.recordState());
      } else {
        log.warn(
            "{}: {} (record left {}): {}",
            id,
            e.getMessage(),
            e.recordState(),
            String.valueOf(e.getCause()));
      }
      return Problems.response(
          503,
          ErrorCode.OPERATION_INTERRUPTED,
          "Operation interrupted",
          switch (e.recordState()) {
            case FAILED_RETRYABLE ->
                "The operation failed before anything outside happened. Retry with the same"
                    + " key; it runs again.";
            case UNKNOWN_REQUIRES_RECOVERY ->
                "The operation stopped after an external step, before it could record what"
                    + " follows it. Retry with the same key; it goes on from what it recorded"
                    + " (asking the other side first if needed), and nothing happens twice.";
            default ->
                "The operation stopped after an external step it recorded. Retry with the same"
                    + " key; it resumes where it stopped and nothing happens twice.";
          },
          Duration.ofSeconds(1));
    }
    if (e.getCause() instanceof ResponseCapture.NotReplayedAnswer notReplayed) {
      return notReplayed.answer();
    }
    if (!(e.getCause() instanceof ResponseCapture.ResponseTooLargeException tooLarge)) {
      throw e.getCause() == null ? e : e.getCause();
    }
    log.error("{}: {}", id, tooLarge.getMessage());
    return Problems.response(
        500,
        ErrorCode.IDEMPOTENCY_RESPONSE_TOO_LARGE,
        "Response too large to store",
        "The answer could not be stored for replay, so the operation was rolled back."
            + " Nothing happened; the service must raise idemkit.max-stored-response-bytes.");
  }

  /** What an issued key past its validity that has no record is told. */
  ResponseEntity<byte[]> expiredUnused() {
    return notIssued(
        "This issued key expired before it was used. Request a new key from "
            + properties.getIssuedKeys().getEndpoint()
            + ", then send the request with it.");
  }

  static ResponseEntity<byte[]> notIssued(String detail) {
    return Problems.response(
        400,
        ErrorCode.IDEMPOTENCY_KEY_NOT_ISSUED,
        "Idempotency-Key not issued for this operation",
        detail);
  }

  /** Never garbage and never a second run: the stored answer is gone or broken, say so. */
  private static ResponseEntity<byte[]> unreadable(ScopedKey id, RecordUnreadableException e) {
    if (e.isGone()) {
      log.info("{}: stored answer unreadable ({})", id, e.reason());
      return Problems.response(
          410,
          ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE,
          "Stored answer no longer available",
          e.reason() == RecordUnreadableException.Reason.REFERENCE_GONE
              ? "This key's operation already ran, and what it created no longer exists. It is"
                  + " not run again; use a new key for a new operation."
              : "This key's operation already ran, and its stored answer was erased on purpose."
                  + " It is not run again; find what it created through the API (for example by"
                  + " the reference you sent with it), or use a new key for a new operation.");
    }
    log.error("{}: stored answer unreadable ({}): {}", id, e.reason(), e.getMessage());
    return Problems.response(
        500,
        ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE,
        "Stored answer unreadable",
        "This key's operation already ran, but its stored answer cannot be read here. It is not"
            + " run again; the service's operators must restore its keys.");
  }

  /** Nothing was stored for the refused key: the same key may be retried after Retry-After. */
  private static ResponseEntity<byte[]> quotaExceeded(Outcome.QuotaExceeded refused) {
    String detail =
        switch (refused.quota()) {
          case "live_records" ->
              "Your account has "
                  + refused.limit()
                  + " operations in progress or awaiting recovery, the most it may have. Retry"
                  + " after Retry-After seconds, when some have finished"
                  + (refused.retryAfter().toSeconds() >= 60
                      ? " (they are all waiting for an operator to resolve their outcome)."
                      : ".");
          case "concurrent_requests" ->
              "Your account has "
                  + refused.limit()
                  + " requests running at once, the most it may have. Nothing was done; retry with"
                  + " the same key after Retry-After seconds.";
          default ->
              "Your account used its "
                  + refused.limit()
                  + " new idempotency keys for this minute. Retry with the same key after"
                  + " Retry-After seconds.";
        };
    return Problems.response(
        429,
        ErrorCode.IDEMPOTENCY_QUOTA_EXCEEDED,
        "Idempotency quota exceeded",
        detail,
        refused.retryAfter());
  }

  static ResponseEntity<byte[]> inProgress(Duration retryAfter) {
    return Problems.response(
        409,
        ErrorCode.IDEMPOTENCY_REQUEST_IN_PROGRESS,
        "Request in progress",
        "A request with this key is being processed. Retry with the same key after Retry-After"
            + " seconds to get its answer.",
        retryAfter);
  }

  static ResponseEntity<byte[]> invalidKey(String why) {
    return Problems.response(
        400,
        ErrorCode.IDEMPOTENCY_KEY_INVALID,
        "Idempotency-Key invalid",
        "The Idempotency-Key header is malformed: "
            + why
            + ". Send one key of 1-255 visible ASCII characters, bare or as a quoted string.");
  }
}
