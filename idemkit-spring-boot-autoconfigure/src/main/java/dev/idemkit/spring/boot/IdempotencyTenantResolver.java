package dev.idemkit.spring.boot;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Names the tenant a request belongs to: the scope of its keys. Never a value the client merely
 * asserts (a header), always the authenticated principal's account.
 */
@FunctionalInterface
public interface IdempotencyTenantResolver {

  /**
   * @return the tenant, or {@code null} if the request is not authenticated (it is then refused
   *     with 401 and leaves no record)
   */
  String resolveTenant(HttpServletRequest request);

  /** The default: the name of the request's authenticated principal. */
  static IdempotencyTenantResolver principalName() {
    return request ->
        request.getUserPrincipal() == null ? null : request.getUserPrincipal().getName();
  }
}
