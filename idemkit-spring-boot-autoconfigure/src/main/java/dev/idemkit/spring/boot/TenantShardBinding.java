package dev.idemkit.spring.boot;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.http.ResponseEntity;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Binds each request to its tenant's shard before its handler runs, so before any transaction
 * starts, and unbinds it after the request completed. The tenant is the {@link
 * IdempotencyTenantResolver}'s and its shard the {@link TenantDirectory}'s as this instance last
 * read it: no statement. A tenant the directory says is moving is answered 503 {@code
 * TENANT_MOVING} with {@code Retry-After: 1}, and only that tenant. With regions, a tenant whose
 * shard is in another region is answered 307 {@code TENANT_HOMED_ELSEWHERE} to that region's URL
 * with the request's path and query (docs/regions.md): redirected, not forwarded, since nothing is
 * done here and a retry at the home region is the same request. A request with no tenant is not
 * bound: an idempotent handler answers it 401, and any statement it runs fails.
 */
final class TenantShardBinding implements HandlerInterceptor {

  /** The request attribute holding what was bound before this request (empty: nothing). */
  private static final String BOUND_BEFORE = TenantShardBinding.class.getName() + ".before";

  private final TenantShards shards;
  private final TenantDirectory directory;
  private final Map<String, String> regionUrls;
  private final Supplier<IdempotencyTenantResolver> tenants;

  /** {@code regionUrls}: each other region's public base URL, by region (empty: no regions). */
  TenantShardBinding(
      TenantShards shards,
      TenantDirectory directory,
      Map<String, String> regionUrls,
      Supplier<IdempotencyTenantResolver> tenants) {
    this.shards = shards;
    this.directory = directory;
    this.regionUrls = Map.copyOf(regionUrls);
    this.tenants = tenants;
  }

  @Override
  public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
      throws IOException {
    if (request.getAttribute(BOUND_BEFORE) != null) {
      return true;
    }
    String tenant = tenants.get().resolveTenant(request);
    if (tenant == null || tenant.isBlank()) {
      return true;
    }
    TenantDirectory.Placement placement = directory.placement(tenant);
    if (placement.state() == TenantDirectory.State.MOVING) {
      write(HttpAnswers.tenantMoving(), response);
      return false;
    }
    String home = shards.region(placement.shard());
    if (home != null && !home.equals(shards.self())) {
      write(HttpAnswers.tenantHomedElsewhere(home, location(home, request)), response);
      return false;
    }
    String before = shards.bind(placement.shard());
    request.setAttribute(BOUND_BEFORE, before == null ? "" : before);
    return true;
  }

  @Override
  public void afterCompletion(
      HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
    Object before = request.getAttribute(BOUND_BEFORE);
    if (before != null) {
      request.removeAttribute(BOUND_BEFORE);
      shards.restore(before.equals("") ? null : (String) before);
    }
  }

  /** The home region's URL for this request: its base URL, then the request's path and query. */
  private String location(String region, HttpServletRequest request) {
    String base = regionUrls.get(region);
    String path = request.getRequestURI();
    String query = request.getQueryString();
    return (base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
        + path
        + (query == null ? "" : "?" + query);
  }

  private static void write(ResponseEntity<byte[]> answer, HttpServletResponse response)
      throws IOException {
    response.setStatus(answer.getStatusCode().value());
    answer.getHeaders().forEach((name, values) -> values.forEach(v -> response.addHeader(name, v)));
    response.getOutputStream().write(answer.getBody());
  }
}
