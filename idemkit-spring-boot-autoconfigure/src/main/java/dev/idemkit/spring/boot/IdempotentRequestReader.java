package dev.idemkit.spring.boot;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.ScopedKey;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.ResponseEntity;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Reads an {@link Idempotent} handler's HTTP request into a request for the engine: the tenant, the
 * key, the fingerprint, and the checks that come before any record (issued keys), or the answer
 * refusing it. Nothing here touches the store.
 */
final class IdempotentRequestReader {

  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  private final IdemkitProperties properties;
  private final IdempotencyTenantResolver tenants;
  private final RequestFingerprinter fingerprinter;
  private final IssuedKeys issuedKeys;

  IdempotentRequestReader(
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      IssuedKeys issuedKeys) {
    this.properties = properties;
    this.tenants = tenants;
    this.fingerprinter = fingerprinter;
    this.issuedKeys = issuedKeys;
  }

  /**
   * Whether the layer handles this call: an {@link Idempotent} method, called for an HTTP request
   * that is not safe (a GET never claims), with the layer enabled, and with a key header unless the
   * key is optional ({@link Idempotent#required()} false: without one the handler runs plainly).
   */
  boolean applies(Idempotent idempotent, HttpServletRequest request) {
    return idempotent != null
        && request != null
        && properties.isEnabled()
        && !SAFE_METHODS.contains(request.getMethod())
        && (idempotent.required()
            || request.getHeaders(IdempotentMethodInterceptor.KEY_HEADER).hasMoreElements());
  }

  /** What reading a request gives: a request ready for the engine, or the answer refusing it. */
  sealed interface Reading {
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
  Reading read(Object[] arguments, IdempotentHandler handler, HttpServletRequest request) {
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
    List<String> values =
        Collections.list(request.getHeaders(IdempotentMethodInterceptor.KEY_HEADER));
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
          HttpAnswers.invalidKey(
              "send exactly one Idempotency-Key header; this request has " + values.size()));
    }
    IdempotencyKey key;
    try {
      key = IdempotencyKey.fromHeader(values.get(0));
    } catch (InvalidIdempotencyKeyException e) {
      return refuse(HttpAnswers.invalidKey(e.getMessage()));
    }

    ScopedKey id = ScopedKey.of(tenant, operation, key.value());
    IssuedKeys.Check issued = issuedKeys.check(key, tenant, operation);
    ResponseEntity<byte[]> notIssued = checkIssuedKey(issued, operation);
    if (notIssued != null) {
      return refuse(notIssued);
    }

    Fingerprint fingerprint;
    Object command = handler.requestBody(arguments);
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
   * Applies the issued-key rules; {@code null} lets the request go on.
   *
   * <ul>
   *   <li>A key in the issued-key form must verify exactly, in strict operations and in every
   *       other: otherwise a variant spelling (or a foreign key) would be taken as an ordinary
   *       client key.
   *   <li>A key whose validity ended goes on, to be answered from its record for the record's whole
   *       window (a retry of a completed operation gets its answer rather than a 400 that a client
   *       takes as final), but it starts nothing: the interceptor asks the engine for the record
   *       only, and answers 400 ({@link HttpAnswers#expiredUnused()}) when there is none.
   *   <li>A strict operation refuses keys that are not in the issued-key form.
   * </ul>
   */
  private ResponseEntity<byte[]> checkIssuedKey(IssuedKeys.Check issued, String operation) {
    String endpoint = properties.getIssuedKeys().getEndpoint();
    return switch (issued) {
      case VALID, EXPIRED -> null;
      case NOT_VERIFIED ->
          HttpAnswers.notIssued(
              "This key has the form of a key issued by "
                  + endpoint
                  + " but is not one issued for your account and this operation, in exactly the text it was"
                  + " issued. Send the key exactly as issued, or request a new one.");
      case NOT_ISSUED_FORM ->
          issuedKeys.isStrict(operation)
              ? HttpAnswers.notIssued(
                  "Operation "
                      + operation
                      + " accepts only keys issued by "
                      + endpoint
                      + " for your account and this operation, before they expire. Request a key, then retry with"
                      + " it.")
              : null;
    };
  }

  static HttpServletRequest currentRequest() {
    RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
    return attributes instanceof ServletRequestAttributes servlet ? servlet.getRequest() : null;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> pathVariables(HttpServletRequest request) {
    Object vars = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
    return vars instanceof Map<?, ?> map ? (Map<String, String>) map : Map.of();
  }
}
