package dev.idemkit.spring.boot;

import dev.idemkit.BusinessRejectionException;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.LocalOperation;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.Operation;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.StoreUnavailable;
import jakarta.servlet.http.HttpServletRequest;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerMapping;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs {@link Idempotent} handler methods through the engine. It runs after Spring MVC bound and
 * validated the arguments (and after the security filters), so a request refused for bad input or
 * missing authentication never reaches the claim and leaves no record.
 *
 * <p>The handler runs inside the engine's transaction: its {@code JdbcTemplate} writes, the claim
 * and the completion commit together. Its answer is serialized here once, stored, and the same
 * bytes are what this request and every replay send.
 */
public class IdempotentMethodInterceptor implements MethodInterceptor {

  /** The request header. */
  public static final String KEY_HEADER = "Idempotency-Key";

  /** Set on replayed answers. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  /** Headers a stored answer keeps; never cookies or credentials. */
  private static final List<String> REPLAYED_HEADERS =
      List.of(HttpHeaders.CONTENT_TYPE, HttpHeaders.LOCATION);

  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  private static final Logger log = LoggerFactory.getLogger(IdempotentMethodInterceptor.class);

  private final Idempotency idempotency;
  private final IdemkitProperties properties;
  private final IdempotencyTenantResolver tenants;
  private final RequestFingerprinter fingerprinter;
  private final IssuedKeys issuedKeys;
  private final JsonMapper mapper;

  /** What each handler method's annotations say, read once per method rather than per request. */
  private final Map<Method, Handler> handlers = new ConcurrentHashMap<>();

  /**
   * Whether the store was found unreachable and not yet reachable again: one WARN per episode,
   * however many requests it fails.
   */
  private final AtomicBoolean storeDown = new AtomicBoolean();

  public IdempotentMethodInterceptor(
      Idempotency idempotency,
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      IssuedKeys issuedKeys,
      JsonMapper mapper) {
    this.idempotency = idempotency;
    this.properties = properties;
    this.tenants = tenants;
    this.fingerprinter = fingerprinter;
    this.issuedKeys = issuedKeys;
    this.mapper = mapper;
  }

  /**
   * Three steps: reading the request ({@code read}) gives a request ready for the engine or the
   * answer refusing it; running it ({@code run}) gives the engine's outcome or its failure; {@code
   * answer} and {@code answerFailure} turn that into the HTTP answer.
   */
  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Handler handler = handler(invocation.getMethod());
    Idempotent idempotent = handler.idempotent();
    HttpServletRequest request = currentRequest();
    if (!applies(idempotent, request)) {
      return invocation.proceed();
    }
    Reading reading = read(invocation, handler, request);
    if (reading instanceof Reading.Refused refused) {
      return refused.answer();
    }
    Reading.Ready ready = (Reading.Ready) reading;
    Outcome outcome;
    try {
      outcome = run(invocation, idempotent, ready);
    } catch (RuntimeException e) {
      return answerFailure(ready.request().id(), idempotent, e);
    }
    if (outcome == null) {
      return notIssued(expiredUnused());
    }
    return answer(ready.request().id(), outcome);
  }

  /**
   * Whether the layer handles this call: an {@link Idempotent} method, called for an HTTP request
   * that is not safe (a GET never claims), with the layer enabled, and with a key header unless the
   * key is optional ({@link Idempotent#required()} false: without one the handler runs plainly).
   */
  private boolean applies(Idempotent idempotent, HttpServletRequest request) {
    return idempotent != null
        && request != null
        && properties.isEnabled()
        && !SAFE_METHODS.contains(request.getMethod())
        && (idempotent.required() || request.getHeaders(KEY_HEADER).hasMoreElements());
  }

  /** What reading a request gives: a request ready for the engine, or the answer refusing it. */
  private sealed interface Reading {
    /**
     * @param existingOnly the key may answer or finish its operation but not start one (an issued
     *     key past its validity): the engine never makes a record for it
     */
    record Ready(IdempotentRequest request, boolean existingOnly) implements Reading {}

    record Refused(ResponseEntity<byte[]> answer) implements Reading {}
  }

  /**
   * Reads the tenant, the key and the fingerprint, and applies the checks that come before a claim
   * (issued keys), in that order (contract §2 (docs/contract.md), "Which answer comes first"): a
   * request nobody authenticated is a 401 whatever key it sends or lacks, as it is where a filter
   * authenticates. Nothing here claims the key: a refused request leaves no record.
   */
  private Reading read(MethodInvocation invocation, Handler handler, HttpServletRequest request) {
    String operation = handler.idempotent().operation();
    String tenant = tenants.resolveTenant(request);
    if (tenant == null || tenant.isBlank()) {
      return refuse(
          Problems.response(
              401,
              ErrorCode.AUTHENTICATION_REQUIRED,
              "Authentication required",
              "Authenticate the request; idempotency keys are scoped to your account."));
    }
    List<String> values = Collections.list(request.getHeaders(KEY_HEADER));
    if (values.isEmpty()) {
      return refuse(
          Problems.response(
              400,
              ErrorCode.IDEMPOTENCY_KEY_MISSING,
              "Idempotency-Key header missing",
              "This endpoint requires an Idempotency-Key header: generate one random key (a UUID)"
                  + " per intended operation and send the same key on every retry of it."));
    }
    if (values.size() > 1) {
      return refuse(
          invalidKey("send exactly one Idempotency-Key header; this request has " + values.size()));
    }
    IdempotencyKey key;
    try {
      key = IdempotencyKey.fromHeader(values.get(0));
    } catch (InvalidIdempotencyKeyException e) {
      return refuse(invalidKey(e.getMessage()));
    }

    ScopedKey id = ScopedKey.of(tenant, operation, key.value());
    IssuedKeys.Check issued = issuedKeys.check(key, tenant, operation);
    ResponseEntity<byte[]> notIssued = checkIssuedKey(issued, operation);
    if (notIssued != null) {
      return refuse(notIssued);
    }

    Fingerprint fingerprint;
    Object command = handler.requestBody(invocation.getArguments());
    Map<String, String> pathVariables = pathVariables(request);
    String versionHeader = properties.getApiVersionHeader();
    List<String> versions = Collections.list(request.getHeaders(versionHeader));
    if (versions.size() > 1 || (versions.size() == 1 && versions.get(0).indexOf(',') >= 0)) {
      // The version is part of the fingerprint: two of them (two fields, or a list in one) would
      // be fingerprinted as whichever one was picked, and a retry that sends them in the other
      // order would be another request.
      return refuse(
          Problems.response(
              400,
              ErrorCode.REQUEST_NOT_CANONICAL,
              "Request cannot be fingerprinted",
              "The request names more than one API version (the "
                  + versionHeader
                  + " header twice, or a list in it). Send one "
                  + versionHeader
                  + " header with one version."));
    }
    String apiVersion = versions.isEmpty() ? null : versions.get(0);
    try {
      fingerprint = fingerprinter.fingerprint(operation, command, pathVariables, apiVersion);
    } catch (IllegalArgumentException e) {
      return refuse(
          Problems.response(
              400,
              ErrorCode.REQUEST_NOT_CANONICAL,
              "Request cannot be fingerprinted",
              "The request holds a value that has no exact canonical form ("
                  + e.getMessage()
                  + ")."
                  + " Send numbers as decimal strings and text as valid Unicode."));
    }
    Duration ttl = handler.ttl() != null ? handler.ttl() : properties.getDefaultTtl();

    // A record made under another recipe or key is compared under its own (contract §4
    // (docs/contract.md)).
    return new Reading.Ready(
        new IdempotentRequest(
            id,
            fingerprint,
            ttl,
            stored ->
                fingerprinter.recompute(operation, command, pathVariables, apiVersion, stored)),
        issued == IssuedKeys.Check.EXPIRED);
  }

  private static Reading refuse(ResponseEntity<byte[]> answer) {
    return new Reading.Refused(answer);
  }

  /**
   * Runs the request through the engine: the handler inside the engine's transaction, or, for a
   * phased handler, the operation it builds. While another request holds the key, waits up to
   * {@code idemkit.in-progress-wait} for its answer, asking again every 50 ms.
   *
   * <p>An issued key past its validity ({@link Reading.Ready#existingOnly()}) runs through {@link
   * Idempotency#executeExisting}: answered from its record for the record's whole window, never the
   * start of a new operation; null when it has no record. The engine decides that in the claim
   * itself, not in a read before it, so two races end cleanly: a request whose key expired while
   * the key's first request is still in its transaction (its claim not committed, invisible to any
   * read) waits for that claim and gets its answer, rather than a 400 "expired before it was used"
   * for a key that was used; and a record whose window ends between a check and the claim is not
   * replaced by a new operation under the expired key.
   */
  private Outcome run(MethodInvocation invocation, Idempotent idempotent, Reading.Ready ready)
      throws Throwable {
    Method method = invocation.getMethod();
    IdempotentRequest request = ready.request();
    // A handler is a controller method that may do more than its transaction's statements (log,
    // call, send): its record is claimed first, so that a retry or a concurrent duplicate never
    // runs it again, rather than written last (a duplicate would run it and roll back only what
    // the transaction holds).
    Operation run =
        idempotent.phased()
            ? phases(invocation)
            : LocalOperation.claimingFirst(ctx -> toStored(invocation, method));
    Outcome outcome = runOnce(request, run, ready.existingOnly());
    long deadline = System.nanoTime() + properties.getInProgressWait().toNanos();
    while (outcome instanceof Outcome.InProgress && System.nanoTime() < deadline) {
      Thread.sleep(50);
      outcome = runOnce(request, run, ready.existingOnly());
    }
    storeReachable();
    return outcome;
  }

  private Outcome runOnce(IdempotentRequest request, Operation run, boolean existingOnly) {
    return existingOnly
        ? idempotency.executeExisting(request, run).orElse(null)
        : idempotency.execute(request, run);
  }

  /**
   * The answer to a failure of {@code run}: 503 when the store is unreachable, else {@code failed}.
   */
  private ResponseEntity<byte[]> answerFailure(
      ScopedKey id, Idempotent idempotent, RuntimeException failure) throws Throwable {
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
   * Whether {@code failure} says the store cannot be reached: a lost or refused connection, or a
   * commit or rollback that the transaction manager could not carry out (after a connection was
   * dropped, Spring reports the failed rollback, with the pool's "connection is closed", in place
   * of the dropped connection's error).
   */
  private static boolean storeUnreachable(Throwable failure) {
    if (StoreUnavailable.isCauseOf(failure)) {
      return true;
    }
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof TransactionSystemException) {
        return true;
      }
    }
    return false;
  }

  private void storeReachable() {
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
    if (e.getCause() instanceof NotReplayedAnswer notReplayed) {
      return notReplayed.answer;
    }
    if (!(e.getCause() instanceof ResponseTooLargeException tooLarge)) {
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

  /**
   * Applies the issued-key rules; {@code null} lets the request go on.
   *
   * <ul>
   *   <li>A key in the issued-key form must verify exactly, in strict operations and in every
   *       other: otherwise a variant spelling (or a foreign key) would be taken as an ordinary
   *       client key.
   *   <li>A key whose validity ended goes on, to be answered from its record for the record's whole
   *       window (a retry of a completed operation gets its answer rather than a 400 that a client
   *       takes as final), but it starts nothing: {@link #run} asks the engine for the record only,
   *       and answers 400 ({@link #expiredUnused()}) when there is none.
   *   <li>A strict operation refuses keys that are not in the issued-key form.
   * </ul>
   */
  private ResponseEntity<byte[]> checkIssuedKey(IssuedKeys.Check issued, String operation) {
    String endpoint = properties.getIssuedKeys().getEndpoint();
    return switch (issued) {
      case VALID, EXPIRED -> null;
      case NOT_VERIFIED ->
          notIssued(
              "This key has the form of a key issued by "
                  + endpoint
                  + " but is not one issued for your account and this operation, in exactly the text it was"
                  + " issued. Send the key exactly as issued, or request a new one.");
      case NOT_ISSUED_FORM ->
          issuedKeys.isStrict(operation)
              ? notIssued(
                  "Operation "
                      + operation
                      + " accepts only keys issued by "
                      + endpoint
                      + " for your account and this operation, before they expire. Request a key, then retry with"
                      + " it.")
              : null;
    };
  }

  /** What an issued key past its validity that has no record is told. */
  private String expiredUnused() {
    return "This issued key expired before it was used. Request a new key from "
        + properties.getIssuedKeys().getEndpoint()
        + ", then send the request with it.";
  }

  private static ResponseEntity<byte[]> notIssued(String detail) {
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

  /** A phased handler only builds its operation; it runs outside any transaction. */
  private static PhasedOperation<?> phases(MethodInvocation invocation) throws Throwable {
    Object result = invocation.proceed();
    if (result instanceof ResponseEntity<?> entity
        && entity.getBody() instanceof PhasedOperation<?> operation) {
      return operation;
    }
    throw new IllegalStateException(
        "@Idempotent(phased = true) handler "
            + invocation.getMethod()
            + " must return IdempotentPhases.run(operation)");
  }

  private ResponseEntity<byte[]> answer(ScopedKey id, Outcome outcome) {
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
      return toEntity(executed.response(), false);
    }

    @Override
    public ResponseEntity<byte[]> rejected(Outcome.Rejected rejected) {
      return toEntity(rejected.response(), false);
    }

    @Override
    public ResponseEntity<byte[]> replayed(Outcome.Replayed replayed) {
      log.debug("{}: replayed", id);
      return toEntity(replayed.response(), true);
    }

    @Override
    public ResponseEntity<byte[]> inProgress(Outcome.InProgress inProgress) {
      return IdempotentMethodInterceptor.inProgress(inProgress.retryAfter());
    }

    @Override
    public ResponseEntity<byte[]> quotaExceeded(Outcome.QuotaExceeded refused) {
      return IdempotentMethodInterceptor.quotaExceeded(refused);
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

  /** Nothing was stored for the refused key: the same key may be retried after Retry-After. */
  private static ResponseEntity<byte[]> quotaExceeded(Outcome.QuotaExceeded refused) {
    String detail =
        refused.quota().equals("live_records")
            ? "Your account has "
                + refused.limit()
                + " operations in progress or awaiting recovery, the most it may have. Retry"
                + " after Retry-After seconds, when some have finished"
                + (refused.retryAfter().toSeconds() >= 60
                    ? " (they are all waiting for an operator to resolve their outcome)."
                    : ".")
            : "Your account used its "
                + refused.limit()
                + " new idempotency keys for this minute. Retry with the same key after"
                + " Retry-After seconds.";
    return Problems.response(
        429,
        ErrorCode.IDEMPOTENCY_QUOTA_EXCEEDED,
        "Idempotency quota exceeded",
        detail,
        refused.retryAfter());
  }

  private static ResponseEntity<byte[]> inProgress(Duration retryAfter) {
    return Problems.response(
        409,
        ErrorCode.IDEMPOTENCY_REQUEST_IN_PROGRESS,
        "Request in progress",
        "A request with this key is being processed. Retry with the same key after Retry-After"
            + " seconds to get its answer.",
        retryAfter);
  }

  private static ResponseEntity<byte[]> invalidKey(String why) {
    return Problems.response(
        400,
        ErrorCode.IDEMPOTENCY_KEY_INVALID,
        "Idempotency-Key invalid",
        "The Idempotency-Key header is malformed: "
            + why
            + ". Send one key of 1-255 visible ASCII characters, bare or as a quoted string.");
  }

  /** Runs the handler and turns its answer, or its business refusal, into a stored response. */
  private OperationResult toStored(MethodInvocation invocation, Method method) throws Exception {
    Object result;
    try {
      result = invocation.proceed();
    } catch (Exception e) {
      if (e instanceof ErrorResponse error && replayed(method, error.getStatusCode().value())) {
        HttpStatusCode status = error.getStatusCode();
        byte[] body = Problems.body(error.getBody());
        throw new BusinessRejectionException(
            "Rejected with " + status.value(),
            stored(status.value(), Problems.PROBLEM_JSON.toString(), null, body));
      }
      throw e;
    } catch (Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
    int status;
    HttpHeaders headers;
    Object body;
    if (result instanceof ResponseEntity<?> entity) {
      status = entity.getStatusCode().value();
      headers = entity.getHeaders();
      body = entity.getBody();
    } else {
      ResponseStatus annotated = handler(method).responseStatus();
      status = annotated == null ? 200 : annotated.code().value();
      headers = HttpHeaders.EMPTY;
      body = result;
    }
    byte[] bytes;
    if (body == null) {
      bytes = new byte[0];
    } else if (body instanceof byte[] raw) {
      bytes = raw;
    } else if (body instanceof String text) {
      bytes = text.getBytes(StandardCharsets.UTF_8);
    } else {
      bytes = mapper.writeValueAsBytes(body);
    }
    if (bytes.length > properties.getMaxStoredResponseBytes()) {
      throw new ResponseTooLargeException(bytes.length, properties.getMaxStoredResponseBytes());
    }
    MediaType type = headers.getContentType();
    String contentType =
        type != null ? type.toString() : body == null ? null : MediaType.APPLICATION_JSON_VALUE;
    StoredResponse response =
        withSchemaVersion(
            stored(status, contentType, headers.getFirst(HttpHeaders.LOCATION), bytes),
            handler(method).idempotent());
    if (status < 400) {
      return OperationResult.success(response);
    }
    if (!replayed(method, status)) {
      // Not for replay (say a transient conflict): answered, but the transaction, claim
      // included, is rolled back, so a retry with the key runs again.
      throw new NotReplayedAnswer(toEntity(response, false));
    }
    return OperationResult.rejected(response);
  }

  /**
   * Whether a failure status is stored and replayed: the operation's own {@link
   * Idempotent#replayedStatuses()} when it names any, else {@code idemkit.replayable-statuses}.
   */
  private boolean replayed(Method method, int status) {
    Idempotent idempotent = handler(method).idempotent();
    int[] own = idempotent == null ? new int[0] : idempotent.replayedStatuses();
    if (own.length == 0) {
      return properties.getReplayableStatuses().contains(status);
    }
    for (int s : own) {
      if (s == status) {
        return true;
      }
    }
    return false;
  }

  /** A failure answer the operation's replay policy does not store: given once, then forgotten. */
  static final class NotReplayedAnswer extends RuntimeException {
    private final transient ResponseEntity<byte[]> answer;

    NotReplayedAnswer(ResponseEntity<byte[]> answer) {
      super(
          "answered " + answer.getStatusCode().value() + ", not stored for replay",
          null,
          false,
          false);
      this.answer = answer;
    }
  }

  private static StoredResponse stored(
      int status, String contentType, String location, byte[] body) {
    Map<String, String> headers = new LinkedHashMap<>();
    if (contentType != null) {
      headers.put(HttpHeaders.CONTENT_TYPE, contentType);
    }
    if (location != null) {
      headers.put(HttpHeaders.LOCATION, location);
    }
    return StoredResponse.of(status, headers, body);
  }

  private static StoredResponse withSchemaVersion(StoredResponse r, Idempotent idempotent) {
    int version = idempotent == null ? 1 : idempotent.schemaVersion();
    return version == r.schemaVersion()
        ? r
        : new StoredResponse(r.status(), r.headers(), r.body(), version, r.resourceId());
  }

  private static ResponseEntity<byte[]> toEntity(StoredResponse response, boolean replayed) {
    ResponseEntity.BodyBuilder builder = ResponseEntity.status(response.status());
    for (String name : REPLAYED_HEADERS) {
      String value = response.headers().get(name);
      if (value != null) {
        builder.header(name, value);
      }
    }
    if (replayed) {
      builder.header(REPLAYED_HEADER, "true");
    }
    return builder.body(response.body());
  }

  private static HttpServletRequest currentRequest() {
    RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
    return attributes instanceof ServletRequestAttributes servlet ? servlet.getRequest() : null;
  }

  private Handler handler(Method method) {
    return handlers.computeIfAbsent(method, Handler::of);
  }

  /**
   * A handler method's {@link Idempotent} (null when it has none), its {@link ResponseStatus}, the
   * position of its {@link RequestBody} parameter (-1: none) and its own window (null: the
   * default). Spring's merged-annotation lookup and the parameters' annotations cost a search and
   * copies on every call, and a method's annotations do not change.
   */
  private record Handler(
      Idempotent idempotent, ResponseStatus responseStatus, int bodyIndex, Duration ttl) {

    static Handler of(Method method) {
      Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
      int bodyIndex = -1;
      Annotation[][] annotations = method.getParameterAnnotations();
      for (int i = 0; i < annotations.length && bodyIndex < 0; i++) {
        for (Annotation a : annotations[i]) {
          if (a instanceof RequestBody) {
            bodyIndex = i;
            break;
          }
        }
      }
      return new Handler(
          idempotent,
          AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class),
          bodyIndex,
          idempotent == null || idempotent.ttl().isEmpty()
              ? null
              : Duration.parse(idempotent.ttl()));
    }

    Object requestBody(Object[] arguments) {
      return bodyIndex < 0 ? null : arguments[bodyIndex];
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> pathVariables(HttpServletRequest request) {
    Object vars = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
    return vars instanceof Map<?, ?> map ? (Map<String, String>) map : Map.of();
  }

  /** The answer is larger than {@code idemkit.max-stored-response-bytes}. */
  static final class ResponseTooLargeException extends RuntimeException {
    ResponseTooLargeException(int size, int limit) {
      super(
          "response of "
              + size
              + " bytes exceeds idemkit.max-stored-response-bytes="
              + limit
              + "; rolled back");
    }
  }
}
