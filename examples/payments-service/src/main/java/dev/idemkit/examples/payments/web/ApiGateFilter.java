package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.ErrorCode;
import dev.idemkit.spring.boot.Problems;
import dev.idemkit.spring.boot.RefusalPause;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The gate in front of every request, in the order a request meets it:
 *
 * <ol>
 *   <li>the path must be in its one accepted spelling ({@link RequestPaths}): no {@code ;}, no
 *       encoded {@code /}, {@code \}, no {@code .}/{@code ..} or empty segments, no percent-encoded
 *       character that may be written plainly; anything else is 400 {@code MALFORMED_PATH}. The
 *       decisions below are taken on the decoded path, which is the path the router matches (and is
 *       checked to be the one Tomcat and Spring MVC parsed);
 *   <li>the query string must be percent-encoded UTF-8 text without control characters ({@link
 *       QueryStrings}), else 400 {@code INVALID_QUERY_PARAMETER} naming the parameter: read here,
 *       before anything asks Tomcat for a parameter, which would fail on bytes that are not UTF-8;
 *   <li>authentication ({@link ApiKeys}: the deployment's keys, or the demo ones of a map it leaves
 *       empty), denying by default: the OpenAPI document and the management endpoints named in
 *       {@code payments.management.open-endpoints} (default {@code health}) are open; {@code
 *       /v1/admin/**} and every other management endpoint ({@code /actuator/**}: metrics too) take
 *       an operator's admin API key; everything else takes a tenant's API key. Admin keys open the
 *       operator endpoints and nothing else;
 *   <li>rate limiting per tenant ({@link TenantRateLimit}), and the body size limit (for every
 *       request). A request over the rate waits {@code idemkit.quota.refusal-pause} before its 429
 *       (the layer's {@link RefusalPause}, shared with its quota refusals), parked without a thread
 *       and answered in turn with the tenant's others, so that a client sending again the moment it
 *       is refused gets a few answers a second, however many connections it opens (up to {@code
 *       idemkit.quota.max-parked-refusals-per-tenant}).
 * </ol>
 *
 * A request refused here never reaches a handler, so it leaves no idempotency record: fixed and
 * retried with the same key, it is a first request. The gate runs before every other filter (it
 * reads nothing but the request line and headers), so that no byte of a body is read before the
 * caller is authenticated and the size limit applies: a filter that parses form bodies would
 * otherwise read a large unauthenticated body whole (the service parses none: {@code
 * spring.mvc.formcontent.filter.enabled=false}). A refused request's body is never drained: the
 * container closes the connection rather than read a large remainder. The admin endpoints check for
 * an operator themselves as well ({@link AdminController}), so that a gap here cannot expose them.
 */
@Component
@Order(ApiGateFilter.ORDER)
public class ApiGateFilter extends OncePerRequestFilter {

  /**
   * Before every filter that could read a body (Spring's form content filter runs at -9900, the
   * hidden method filter at -10000), after only the character encoding and observation filters.
   */
  public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

  /** The stable errorCode of a path refused for its spelling. */
  public static final String MALFORMED_PATH = "MALFORMED_PATH";

  /** What to do about it. */
  static final String MALFORMED_PATH_DETAIL =
      "Send the path in its plain form: no ';' parameters, no '.' or '..' or empty segments, no"
          + " percent-encoded '/', '\\', '%' or letters, digits and '-._~', no control"
          + " characters, and other characters percent-encoded as UTF-8.";

  /** The stable errorCode of a query parameter that is not of its type or not text we take. */
  public static final String INVALID_QUERY_PARAMETER = "INVALID_QUERY_PARAMETER";

  /** What to do about a query parameter's characters. */
  static final String INVALID_QUERY_TEXT_DETAIL =
      "Send query parameters as text without control characters, percent-encoded as UTF-8.";

  /** The rate limit's name for the refusal pause, and its wait. */
  private static final String REQUESTS_PER_SECOND = "requests_per_second";

  private static final Duration ONE_SECOND = Duration.ofSeconds(1);

  /** How much longer than the longest parked wait the container waits before it ends one. */
  private static final Duration PARKED_TIMEOUT_MARGIN = Duration.ofSeconds(30);

  private static final String ADMIN = "/v1/admin";
  private static final String API_DOCS = "/v3/api-docs";

  /** Who may use a path. */
  private enum Area {
    OPEN,
    OPERATORS,
    TENANTS
  }

  private final PaymentsProperties properties;
  private final ApiKeys keys;
  private final String managementBase;
  private final String errorPath;
  private final List<String> openManagementEndpoints;
  private final TenantRateLimit rateLimit;
  private final RefusalPause refusalPause;

  public ApiGateFilter(
      PaymentsProperties properties,
      ApiKeys keys,
      @Value("${management.endpoints.web.base-path:/actuator}") String managementBase,
      @Value("${payments.management.open-endpoints:health}") List<String> openEndpoints,
      @Value("${server.error.path:/error}") String errorPath,
      RefusalPause refusalPause) {
    this.properties = properties;
    this.rateLimit = new TenantRateLimit(properties.rateLimitPerSecond(), System::nanoTime);
    this.refusalPause = refusalPause;
    this.keys = keys;
    this.errorPath = errorPath;
    this.managementBase = managementBase.toLowerCase(Locale.ROOT);
    this.openManagementEndpoints =
        openEndpoints.stream().map(String::trim).filter(id -> !id.isEmpty()).toList();
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    Optional<String> routed = routedPath(request);
    if (routed.isEmpty()) {
      String raw = request.getRequestURI();
      String context = request.getContextPath();
      write(
          response,
          400,
          MALFORMED_PATH,
          "Malformed path",
          malformedPathDetail(raw.startsWith(context) ? raw.substring(context.length()) : raw));
      return;
    }
    Optional<String> badQuery = QueryStrings.problem(request.getQueryString());
    if (badQuery.isPresent()) {
      write(
          response,
          400,
          INVALID_QUERY_PARAMETER,
          "Invalid query parameter",
          badQuery.get() + " " + INVALID_QUERY_TEXT_DETAIL);
      return;
    }
    Area area = area(routed.get());
    if (area == Area.OPEN) {
      pass(request, response, chain, null);
      return;
    }
    String authorization = request.getHeader("Authorization");
    String operator = keyOwner(authorization, keys::operator);
    if (operator != null || area == Area.OPERATORS) {
      if (operator == null && keyOwner(authorization, keys::tenant) == null) {
        // No key, or one nobody issued: not authenticated (a tenant's key is authenticated, and
        // forbidden below).
        unauthenticated(response, "Operator and management endpoints take an admin API key.");
        return;
      }
      if (operator == null || area != Area.OPERATORS) {
        write(
            response,
            403,
            "FORBIDDEN",
            "Forbidden",
            area == Area.OPERATORS
                ? "Operator and management endpoints take an admin API key."
                : "Admin API keys are for /v1/admin and management only; use a tenant's API key.");
        return;
      }
      pass(request, response, chain, new OperatorPrincipal(operator));
      return;
    }
    String tenant = keyOwner(authorization, keys::tenant);
    if (tenant == null) {
      unauthenticated(response, "Send Authorization: Bearer <your API key>.");
      return;
    }
    if (!rateLimit.allows(tenant)) {
      rateLimited(request, response, tenant);
      return;
    }
    if (routed.get().equals(errorPath)) {
      // The container forwards errors there itself (an ERROR dispatch, which this filter does not
      // see); asked for directly, it has no error to render and would answer 500.
      write(response, 404, "NOT_FOUND", "Not found", "No such endpoint.");
      return;
    }
    Principal principal = () -> tenant;
    pass(request, response, chain, principal);
  }

  /**
   * 429 {@code RATE_LIMITED}, after the refusal pause: parked without a thread when the request may
   * go async (the pause's own thread writes the answer), else waiting on this one.
   */
  private void rateLimited(HttpServletRequest request, HttpServletResponse response, String tenant)
      throws IOException {
    if (request.isAsyncSupported()) {
      AsyncContext async = request.startAsync();
      async.setTimeout(refusalPause.longestParkedWait().plus(PARKED_TIMEOUT_MARGIN).toMillis());
      Runnable answer =
          () -> {
            try {
              writeRateLimited((HttpServletResponse) async.getResponse());
              async.complete();
            } catch (IOException | RuntimeException gone) {
              // The client went away, or the container ended the request, while it was parked.
            }
          };
      if (!refusalPause.later(tenant, REQUESTS_PER_SECOND, ONE_SECOND, answer)) {
        answer.run();
      }
      return;
    }
    refusalPause.before(tenant, REQUESTS_PER_SECOND, ONE_SECOND);
    writeRateLimited(response);
  }

  private void writeRateLimited(HttpServletResponse response) throws IOException {
    response.setHeader("Retry-After", "1");
    write(
        response,
        429,
        "RATE_LIMITED",
        "Too many requests",
        "Slow down: at most "
            + rateLimit.perSecond()
            + " requests per second. Retry with the same Idempotency-Key after Retry-After"
            + " seconds.");
  }

  /** What is wrong with a refused path, and what to do about it. */
  static String malformedPathDetail(String rawPath) {
    return RequestPaths.problem(rawPath).map(p -> p + " ").orElse("") + MALFORMED_PATH_DETAIL;
  }

  /**
   * The decoded path the router will match, or empty if the raw path is not in its accepted
   * spelling or if Tomcat or Spring MVC read it differently from the gate (which cannot happen for
   * an accepted spelling: checked anyway, so that the gate never decides on a path nobody routes).
   */
  static Optional<String> routedPath(HttpServletRequest request) {
    String contextPath = request.getContextPath();
    String raw = request.getRequestURI();
    if (!raw.startsWith(contextPath)) {
      return Optional.empty();
    }
    Optional<String> path = RequestPaths.canonical(raw.substring(contextPath.length()));
    if (path.isEmpty()) {
      return path;
    }
    String tomcat =
        request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
    StringBuilder spring = new StringBuilder();
    for (PathContainer.Element e :
        RequestPath.parse(raw, contextPath).pathWithinApplication().elements()) {
      spring.append(
          e instanceof PathContainer.PathSegment segment ? segment.valueToMatch() : e.value());
    }
    return path.get().equals(tomcat) && path.get().equals(spring.toString())
        ? path
        : Optional.empty();
  }

  private Area area(String path) {
    String lower = path.toLowerCase(Locale.ROOT);
    if (path.equals(API_DOCS)
        || path.startsWith(API_DOCS + "/")
        || path.equals(API_DOCS + ".yaml")) {
      return Area.OPEN;
    }
    if (lower.equals(managementBase) || lower.startsWith(managementBase + "/")) {
      for (String id : openManagementEndpoints) {
        String endpoint = managementBase + "/" + id;
        if (path.equals(endpoint) || path.startsWith(endpoint + "/")) {
          return Area.OPEN;
        }
      }
      return Area.OPERATORS;
    }
    if (lower.equals(ADMIN) || lower.startsWith(ADMIN + "/")) {
      return Area.OPERATORS;
    }
    return Area.TENANTS;
  }

  /** On to the handler, with the caller as principal and a body that cannot exceed the limit. */
  private void pass(
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain,
      Principal principal)
      throws ServletException, IOException {
    if (request.getContentLengthLong() > properties.maxBodyBytes()) {
      write(response, 413, "PAYLOAD_TOO_LARGE", "Request body too large", tooLarge());
      return;
    }
    if (isForm(request.getContentType()) && hasBody(request)) {
      // The container parses a form body for the first getParameter call (Spring's handler
      // mapping makes one), past this gate's limited stream; no endpoint takes one.
      write(
          response,
          415,
          "UNSUPPORTED_MEDIA_TYPE",
          "Unsupported media type",
          "Send Content-Type: application/json.");
      return;
    }
    chain.doFilter(new GatedRequest(request, principal, properties.maxBodyBytes()), response);
  }

  private static boolean isForm(String contentType) {
    if (contentType == null) {
      return false;
    }
    String type = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    return type.equals("application/x-www-form-urlencoded") || type.startsWith("multipart/");
  }

  private static boolean hasBody(HttpServletRequest request) {
    return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
  }

  private String tooLarge() {
    return "Request bodies are limited to " + properties.maxBodyBytes() + " bytes.";
  }

  /** 401 with the Bearer challenge: no key, or one nobody issued. */
  private static void unauthenticated(HttpServletResponse response, String detail)
      throws IOException {
    response.setHeader("WWW-Authenticate", "Bearer");
    write(
        response, 401, ErrorCode.AUTHENTICATION_REQUIRED.code(), "Authentication required", detail);
  }

  private static String keyOwner(String authorization, UnaryOperator<String> owner) {
    if (authorization == null || !authorization.startsWith("Bearer ")) {
      return null;
    }
    return owner.apply(authorization.substring("Bearer ".length()).trim());
  }

  private static void write(
      HttpServletResponse response, int status, String code, String title, String detail)
      throws IOException {
    response.setStatus(status);
    response.setContentType(Problems.PROBLEM_JSON.toString());
    response.getOutputStream().write(Problems.body(status, code, title, detail));
  }

  /** The request with its tenant as principal, and a body that cannot exceed the limit. */
  private static final class GatedRequest extends HttpServletRequestWrapper {
    private final Principal principal;
    private final long limit;
    private ServletInputStream limited;

    GatedRequest(HttpServletRequest request, Principal principal, long limit) {
      super(request);
      this.principal = principal;
      this.limit = limit;
    }

    @Override
    public Principal getUserPrincipal() {
      return principal == null ? super.getUserPrincipal() : principal;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
      if (limited == null) {
        limited = new LimitedInputStream(super.getInputStream(), limit);
      }
      return limited;
    }
  }

  /** Fails a body that grows past the limit (chunked bodies declare no length). */
  private static final class LimitedInputStream extends ServletInputStream {
    private final ServletInputStream in;
    private final long limit;
    private long read;

    LimitedInputStream(ServletInputStream in, long limit) {
      this.in = in;
      this.limit = limit;
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      if (b >= 0) {
        count(1);
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = in.read(b, off, len);
      if (n > 0) {
        count(n);
      }
      return n;
    }

    private void count(int n) throws IOException {
      read += n;
      if (read > limit) {
        throw new BodyTooLargeException(limit);
      }
    }

    @Override
    public boolean isFinished() {
      return in.isFinished();
    }

    @Override
    public boolean isReady() {
      return in.isReady();
    }

    @Override
    public void setReadListener(ReadListener listener) {
      in.setReadListener(listener);
    }
  }

  /** A body past the limit; answered 413. */
  static final class BodyTooLargeException extends IOException {
    BodyTooLargeException(long limit) {
      super("Request bodies are limited to " + limit + " bytes.");
    }
  }
}
