package dev.idemkit.spring.boot;

import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.RecordUnreadableException;

/**
 * The stable {@code errorCode} of every problem answer the idempotency layer gives itself (RFC 9457
 * bodies written by {@link Problems}). A client may switch on these strings: they do not change
 * between versions. Each constant's name is the string it answers with.
 */
public enum ErrorCode {
  /** 400: the endpoint requires an {@code Idempotency-Key} header and the request has none. */
  IDEMPOTENCY_KEY_MISSING,

  /**
   * 400: the header is malformed, or sent more than once. Equal to {@link
   * InvalidIdempotencyKeyException#ERROR_CODE}.
   */
  IDEMPOTENCY_KEY_INVALID,

  /** 400: the key is not one issued for this tenant and operation, or it expired unused. */
  IDEMPOTENCY_KEY_NOT_ISSUED,

  /** 401: no tenant could be resolved; keys are scoped to an authenticated account. */
  AUTHENTICATION_REQUIRED,

  /**
   * 400: the request holds a value with no exact canonical form, or names more than one API version
   * (the version header twice, or a list in it), so it has no fingerprint.
   */
  REQUEST_NOT_CANONICAL,

  /** 429: the tenant's quota of new keys or live records is used up; retry after the delay. */
  IDEMPOTENCY_QUOTA_EXCEEDED,

  /** 409: another request with the key is running; retry after the delay for its answer. */
  IDEMPOTENCY_REQUEST_IN_PROGRESS,

  /**
   * 409: an external call of the first request has an unknown outcome, being recovered, or (title
   * "Outcome awaits an operator", Retry-After at least 60 s) left to an operator after the last
   * automatic attempt. Retry with the same key after the delay either way.
   */
  IDEMPOTENCY_OUTCOME_PENDING,

  /** 422 by default ({@code idemkit.mismatch-status}): the key was used for another request. */
  IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST,

  /**
   * 410 when the stored answer is gone on purpose, 500 when it cannot be read here. Equal to {@link
   * RecordUnreadableException#ERROR_CODE}.
   */
  IDEMPOTENCY_RECORD_UNREADABLE,

  /** 500: the answer is larger than {@code idemkit.max-stored-response-bytes}; rolled back. */
  IDEMPOTENCY_RESPONSE_TOO_LARGE,

  /** 503: the store's database cannot be reached; retry with the same key. */
  IDEMPOTENCY_STORE_UNAVAILABLE,

  /** 503: a phased operation stopped; a retry with the same key runs again or resumes. */
  OPERATION_INTERRUPTED,

  /**
   * 503: the tenant's data is moving between databases (docs/scaling.md); retry with the same key
   * after the delay.
   */
  TENANT_MOVING,

  /**
   * 307: the tenant's home is another region (docs/regions.md); send the same request, same key, to
   * the {@code Location}. Nothing was done here.
   */
  TENANT_HOMED_ELSEWHERE;

  /** The {@code errorCode} string: the constant's name. */
  public String code() {
    return name();
  }
}
