package dev.idemkit.client;

/**
 * The server refused the request with a {@code 4xx} that retrying cannot change (400, 401, 403,
 * 404, 422, a 409 other than "in progress" / "outcome pending", …). Fix the request, or, for a
 * business refusal, accept the answer; {@link #response()} has all of it. A refusal of the
 * credentials (401, 403, 407) decided nothing about the operation, and an earlier attempt may have
 * run: retry it with the same key once they are fixed (a journal keeps it pending).
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
    m.append(" (key ").append(response.key()).append(", attempt ").append(response.attempts());
    if (credentialsRefused(response.status())) {
      m.append(
          "; not retried: the credentials were refused before the operation was looked at. Fix"
              + " them and retry with the same key, never a new one");
      if (response.attempts() > 1) {
        m.append(": an earlier attempt's outcome is unknown");
      }
      m.append(')');
    } else {
      m.append("; not retried: the same request would be refused again)");
    }
    return m.toString();
  }

  /**
   * 401, 403 and 407 refuse the caller, not the operation: the server decided nothing about it, and
   * an earlier attempt may have run (a key revoked between two attempts). Such an operation is not
   * finished: a journal keeps it pending, for {@link IdempotentClient#resume} with fixed
   * credentials.
   */
  static boolean credentialsRefused(int status) {
    return status == 401 || status == 403 || status == 407;
  }
}
