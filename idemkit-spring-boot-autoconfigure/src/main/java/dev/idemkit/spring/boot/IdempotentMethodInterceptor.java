package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.Operation;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs {@link Idempotent} handler methods through the engine. It runs after Spring MVC bound and
 * validated the arguments (and after the security filters), so a request refused for bad input or
 * missing authentication never reaches the store and leaves no record.
 *
 * <p>Its rooms: {@link IdempotentRequestReader} reads the request (tenant, key, fingerprint, issued
 * keys) or refuses it; this class runs it through the engine; {@link ResponseCapture} runs the
 * handler inside the engine's transaction and stores its answer; {@link HttpAnswers} turns the
 * outcome or the failure into the HTTP answer.
 */
public class IdempotentMethodInterceptor implements MethodInterceptor {

  /** The request header. */
  public static final String KEY_HEADER = "Idempotency-Key";

  /** Set on replayed answers. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  private final Idempotency idempotency;
  private final IdemkitProperties properties;
  private final IdempotentRequestReader reader;
  private final ResponseCapture capture;
  private final HttpAnswers answers;

  /** What each handler method's annotations say, read once per method rather than per request. */
  private final Map<Method, IdempotentHandler> handlers = new ConcurrentHashMap<>();

  public IdempotentMethodInterceptor(
      Idempotency idempotency,
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      IssuedKeys issuedKeys,
      JsonMapper mapper,
      RefusalPause refusalPause) {
    this.idempotency = idempotency;
    this.properties = properties;
    this.reader = new IdempotentRequestReader(properties, tenants, fingerprinter, issuedKeys);
    this.capture = new ResponseCapture(properties, mapper);
    this.answers = new HttpAnswers(properties, refusalPause);
  }

  /**
   * Answers the request, or, for a phased handler (whose method returns its operation, not an
   * answer), leaves the answer to {@link PhasedOperationReturnValueHandler}, which writes it.
   */
  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    IdempotentHandler handler =
        handlers.computeIfAbsent(invocation.getMethod(), IdempotentHandler::of);
    HttpServletRequest request = IdempotentRequestReader.currentRequest();
    if (!reader.applies(handler.idempotent(), request)) {
      return invocation.proceed();
    }
    ResponseEntity<byte[]> answer = answer(invocation, handler, request);
    if (!handler.idempotent().phased()) {
      return answer;
    }
    PhasedOperationReturnValueHandler.answer(request, answer);
    return null;
  }

  /**
   * Three steps: reading the request gives a request ready for the engine or the answer refusing
   * it; running it ({@code run}) gives the engine's outcome or its failure; {@link HttpAnswers}
   * turns that into the HTTP answer.
   */
  private ResponseEntity<byte[]> answer(
      MethodInvocation invocation, IdempotentHandler handler, HttpServletRequest request)
      throws Throwable {
    IdempotentRequestReader.Reading reading =
        reader.read(invocation.getArguments(), handler, request);
    if (reading instanceof IdempotentRequestReader.Reading.Refused refused) {
      return refused.answer();
    }
    IdempotentRequestReader.Reading.Ready ready = (IdempotentRequestReader.Reading.Ready) reading;
    Outcome outcome;
    try {
      outcome = run(invocation, handler, ready);
    } catch (RuntimeException e) {
      return answers.failure(ready.request().id(), handler.idempotent(), e);
    }
    if (outcome == null) {
      return answers.expiredUnused();
    }
    return answers.outcome(ready.request().id(), outcome);
  }

  /**
   * Runs the request through the engine: the handler inside the engine's transaction, or, for a
   * phased handler, the operation it builds. While another request holds the key, waits up to
   * {@code idemkit.in-progress-wait} for its answer ({@link InProgressWait}).
   *
   * <p>An issued key past its validity ({@link
   * IdempotentRequestReader.Reading.Ready#existingOnly()}) runs through {@link
   * Idempotency#executeExisting}: answered from its record for the record's whole window, never the
   * start of a new operation; null when it has no record. The engine decides that in the claim
   * itself, not in a read before it, so two races end cleanly: a request whose key expired while
   * the key's first request is still in its transaction (its claim not committed, invisible to any
   * read) waits for that claim and gets its answer, rather than a 400 "expired before it was used"
   * for a key that was used; and a record whose window ends between a check and the claim is not
   * replaced by a new operation under the expired key.
   */
  private Outcome run(
      MethodInvocation invocation,
      IdempotentHandler handler,
      IdempotentRequestReader.Reading.Ready ready)
      throws Throwable {
    IdempotentRequest request = ready.request();
    // A handler is a controller method that may do more than its transaction's statements (log,
    // call, send): its record is claimed first, so that a retry or a concurrent duplicate never
    // runs it again, rather than written last (a duplicate would run it and roll back only what
    // the transaction holds).
    Operation run =
        handler.idempotent().phased()
            ? phases(invocation)
            : LocalOperation.claimingFirst(ctx -> capture.capture(invocation, handler));
    Outcome outcome = runOnce(request, run, ready.existingOnly());
    outcome =
        InProgressWait.askAgainWhileInProgress(
            outcome,
            properties.getInProgressWait(),
            () -> runOnce(request, run, ready.existingOnly()));
    answers.storeReachable();
    return outcome;
  }

  private Outcome runOnce(IdempotentRequest request, Operation run, boolean existingOnly) {
    return existingOnly
        ? idempotency.executeExisting(request, run).orElse(null)
        : idempotency.execute(request, run);
  }

  /** A phased handler only builds its operation; it runs outside any transaction. */
  private static PhasedOperation<?> phases(MethodInvocation invocation) throws Throwable {
    if (invocation.proceed() instanceof PhasedOperation<?> operation) {
      return operation;
    }
    throw new IllegalStateException(
        "@Idempotent(phased = true) handler "
            + invocation.getMethod()
            + " returned null: it must return the PhasedOperation to run");
  }
}
