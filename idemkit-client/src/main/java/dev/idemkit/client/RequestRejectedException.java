package dev.idemkit.client;

/**
 * The server refused the request with a {@code 4xx} that retrying cannot change (400, 401, 403,
 * 404, 422, a 409 other than "in progress" / "outcome pending", …). Fix the request, or, for a
 * business refusal, accept the answer; {@link #response()} has all of it.
 */
public sealed class RequestRejectedException extends IdempotencyClientException
    permits KeyReusedException {

  private static final long serialVersionUID = 1L;

  private final transient IdempotentResponse response;

  RequestRejectedException(IdempotentResponse response, String errorCode, String detail) {
    super(
        message(response, errorCode, detail),
        null,
        response.key(),
        response.attempts(),
        response.status(),
        errorCode,
        detail);
    this.response = response;
  }

  /** The refusal as received: status, headers, body. */
  public IdempotentResponse response() {
    return response;
  }

  private static String message(IdempotentResponse response, String errorCode, String detail) {
    StringBuilder m = new StringBuilder("HTTP ").append(response.status());
    if (errorCode != null) {
      m.append(' ').append(errorCode);
    }
    if (detail != null) {
      m.append(": ").append(detail);
    }
    m.append(" (key ")
        .append(response.key())
        .append(", attempt ")
        .append(response.attempts())
        .append("; not retried: the same request would be refused again)");
    return m.toString();
  }
}
