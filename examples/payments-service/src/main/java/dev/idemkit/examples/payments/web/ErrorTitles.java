package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.ErrorCode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What each error code the service answers with means: the OpenAPI document's {@code ErrorCode}
 * enum (in this order) and the title of each code's problem example. Every code of the starter's
 * {@link ErrorCode} has one; a code the document uses without a title here fails the document's
 * generation, so the enum cannot miss one.
 */
final class ErrorTitles {

  /**
   * What each error code means, for the document's descriptions and examples: every code the
   * service answers with, the {@link #ERROR_CODE} enum's values in this order.
   */
  private static final Map<String, String> TITLES = new LinkedHashMap<>();

  static {
    TITLES.put(ErrorCode.AUTHENTICATION_REQUIRED.code(), "No or unknown API key");
    TITLES.put("FORBIDDEN", "An operator key used outside /v1/admin, or a tenant key inside it");
    TITLES.put("RATE_LIMITED", "Too many requests for this tenant; retry after Retry-After");
    TITLES.put("REQUEST_HEADER_TOO_LARGE", "The request's headers are too large");
    TITLES.put(
        "TOO_MANY_HEADERS", "The request has more header fields than the service accepts (100)");
    TITLES.put(
        "INTERNAL_ERROR",
        "A failure on the service's side; retry (with the same key, where the operation takes"
            + " one)");
    TITLES.put(
        "MALFORMED_PATH",
        "The path is not in its plain form (';', '.', '//', %2F, a control character, ...); the"
            + " detail says where");
    TITLES.put(
        "MALFORMED_REQUEST",
        "The request is not valid HTTP/1.1 (a header with a character HTTP does not allow)");
    TITLES.put("NOT_ACCEPTABLE", "The Accept header excludes application/json");
    TITLES.put("MISSING_QUERY_PARAMETER", "A required query parameter is absent");
    TITLES.put(
        "VALIDATION_FAILED",
        "A field has an invalid value, or a character it does not take (a control character; in"
            + " a reference, an invisible or bidirectional-control one): the detail names the"
            + " field, the character and its position");
    TITLES.put("UNKNOWN_FIELD", "The body has a field this API version does not know");
    TITLES.put("DUPLICATE_FIELD", "The body has the same field more than once");
    TITLES.put("WRONG_TYPE", "A field has the wrong JSON type");
    TITLES.put("INVALID_JSON", "The body is not valid JSON");
    TITLES.put("PAYLOAD_TOO_LARGE", "The body is larger than the service accepts");
    TITLES.put("UNSUPPORTED_MEDIA_TYPE", "The body is not application/json");
    TITLES.put("INVALID_PATH_PARAMETER", "A path id is not a UUID");
    TITLES.put(
        "INVALID_QUERY_PARAMETER",
        "A query parameter is not of its type (a number, an id), is not percent-encoded UTF-8, or"
            + " has a character it does not take (a control character; in a reference, an"
            + " invisible or bidirectional-control one): the detail names it");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_KEY_MISSING.code(),
        "The endpoint requires an Idempotency-Key header");
    TITLES.put(ErrorCode.IDEMPOTENCY_KEY_INVALID.code(), "The Idempotency-Key header is malformed");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_KEY_NOT_ISSUED.code(),
        "The operation accepts only keys issued by POST /v1/idempotency-keys");
    TITLES.put(
        ErrorCode.REQUEST_NOT_CANONICAL.code(),
        "A value has no exact canonical form, or Api-Version is sent twice or as a list");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_REQUEST_IN_PROGRESS.code(),
        "The first request with this key is still running; retry after Retry-After");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_OUTCOME_PENDING.code(),
        "A downstream outcome of the first request is being recovered, or awaits an operator's"
            + " resolution once automatic recovery gave up (Retry-After of at least 60 s);"
            + " retry with the same key after Retry-After");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST.code(),
        "The key was used for a different request; never a silent replay");
    TITLES.put(
        ErrorCode.OPERATION_INTERRUPTED.code(),
        "The operation stopped; retry with the same key after Retry-After, nothing happens twice");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_RESPONSE_TOO_LARGE.code(),
        "The answer was too large to store for replay; nothing happened");
    TITLES.put("PAYMENT_DECLINED", "The provider declined the payment; nothing was charged");
    TITLES.put(
        "PAYMENT_ALREADY_EXISTS",
        "The account already has a payment for this merchant reference (existingPaymentId)");
    TITLES.put("PAYMENT_NOT_FOUND", "No such payment of yours");
    TITLES.put("ORDER_NOT_FOUND", "No such order of yours");
    TITLES.put("AMOUNT_MISMATCH", "The amount or currency is not the order's total");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE.code(),
        "The first request ran, and its stored answer was erased (410) or cannot be read here"
            + " (500); it is never run again");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_QUOTA_EXCEEDED.code(),
        "The tenant's quota of new keys or live records is used up; retry after Retry-After");
    TITLES.put(
        ErrorCode.IDEMPOTENCY_STORE_UNAVAILABLE.code(),
        "The database cannot be reached; retry with the same key after Retry-After");
    TITLES.put(
        ErrorCode.TENANT_MOVING.code(),
        "The tenant is moving to another database; retry with the same key after Retry-After");
    TITLES.put(
        ErrorCode.TENANT_HOMED_ELSEWHERE.code(),
        "The tenant is served in another region; send the request unchanged to the Location");
    TITLES.put(
        "PAYMENT_ABANDONED",
        "The payment waited for a retry too long and was closed unpaid; pay with a new key");
    TITLES.put("UNKNOWN_PROVIDER_FAULT", "The demo fault header names no known fault");
    TITLES.put("SHIPMENT_NOT_FOUND", "No shipment yet: it is requested once the order is paid");
    TITLES.put("ACCOUNT_NOT_FOUND", "No ledger entries for this account of yours");
    TITLES.put("RECORD_NOT_FOUND", "No idempotency record for this scope");
    TITLES.put(
        "RECORD_NOT_AWAITING_RESOLUTION",
        "Only a record whose external outcome is unknown takes a resolution");
    TITLES.put("RESOLUTION_INVALID", "APPLIED needs an externalReference; NOT_APPLIED has none");
    TITLES.put(
        "RESOLUTION_CONFLICT",
        "The record already holds a different resolution recovery has not acted on; nothing"
            + " changed (the same resolution again is answered as the first)");
    TITLES.put(
        "TENANT_HAS_UNSETTLED_RECORDS",
        "Some of the tenant's records still need their recovery data: settle them, then shred");
    TITLES.put("NOT_SHARDED", "The service runs on one database: no tenant moves");
    TITLES.put("SHARD_NOT_FOUND", "No shard of that name: name one of idemkit.shards.*");
    TITLES.put(
        "TENANT_MOVING_ELSEWHERE",
        "The tenant is moving to another shard: finish that move, then move it on");
    TITLES.put(
        "TENANT_NOT_FOUND",
        "No API key of this service names the tenant (and, to shred, it holds no data key)");
    TITLES.put(
        "MASTER_KEY_STILL_WRAPS_DATA_KEYS",
        "Data keys are still wrapped by the master key: make another current everywhere, retry");
    TITLES.put(
        "MASTER_KEY_UNAVAILABLE", "This process cannot unwrap with the master key: configure it");
    TITLES.put(
        "MASTER_KEY_NOT_FOUND",
        "No master key by this id: none is configured here, and none wraps a data key");
    TITLES.put("PARKED_EVENT_NOT_FOUND", "No parked event with this id");
    TITLES.put("CONSUMER_NOT_FOUND", "No consumer with this name");
    TITLES.put("PARKED_MESSAGE_NOT_FOUND", "No parked message with this id at this consumer");
    TITLES.put("PARKED_DELIVERY_NOT_FOUND", "No parked delivery with this key");
    TITLES.put("NOT_FOUND", "No such endpoint");
    TITLES.put("METHOD_NOT_ALLOWED", "The endpoint does not take this method");
    for (ErrorCode code : ErrorCode.values()) {
      of(code.code());
    }
  }

  private ErrorTitles() {}

  /** Every code, in the enum's order. */
  static List<String> codes() {
    return List.copyOf(TITLES.keySet());
  }

  /** A code's title; every code the service answers with has one, so the enum lists it. */
  static String of(String errorCode) {
    String title = TITLES.get(errorCode);
    if (title == null) {
      throw new IllegalStateException(
          "errorCode "
              + errorCode
              + " has no title in ErrorTitles: add it, so the"
              + " document's ErrorCode enum lists it");
    }
    return title;
  }
}
