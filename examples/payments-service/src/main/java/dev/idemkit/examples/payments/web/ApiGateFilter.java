package dev.idemkit.examples.payments.web;

import dev.idemkit.examples.payments.PaymentsProperties;
import dev.idemkit.spring.boot.Problems;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The gate in front of {@code /v1/**}, in the order a request meets it: authentication (an API key
 * mapped to a tenant; operators' admin keys open {@code /v1/admin/**} and nothing else), rate
 * limiting per tenant, and the body size limit. A request refused here never reaches a handler, so
 * it leaves no idempotency record: fixed and retried with the same key, it is a first request.
 */
@Component
@Order(1)
public class ApiGateFilter extends OncePerRequestFilter {

  private final PaymentsProperties properties;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  public ApiGateFilter(PaymentsProperties properties) {
    this.properties = properties;
  }

  @Override
  protected boolean shouldNotFilter(HttpServletRequest request) {
    return !request.getRequestURI().startsWith("/v1/");
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String authorization = request.getHeader("Authorization");
    boolean adminPath = request.getRequestURI().startsWith("/v1/admin/");
    String operator = keyOwner(authorization, properties.adminApiKeys());
    if (operator != null || adminPath) {
      if (operator == null || !adminPath) {
        write(
            response,
            authorization == null ? 401 : 403,
            authorization == null ? "AUTHENTICATION_REQUIRED" : "FORBIDDEN",
            authorization == null ? "Authentication required" : "Forbidden",
            adminPath
                ? "Operator endpoints take an admin API key."
                : "Admin API keys are for /v1/admin only; use a tenant's API key.");
        return;
      }
      Principal admin = () -> "admin:" + operator;
      chain.doFilter(new GatedRequest(request, admin, properties.maxBodyBytes()), response);
      return;
    }
    String tenant = keyOwner(authorization, properties.apiKeys());
    if (tenant == null) {
      response.setHeader("WWW-Authenticate", "Bearer");
      write(
          response,
          401,
          "AUTHENTICATION_REQUIRED",
          "Authentication required",
          "Send Authorization: Bearer <your API key>.");
      return;
    }
    if (!allowed(tenant)) {
      response.setHeader("Retry-After", "1");
      write(
          response,
          429,
          "RATE_LIMITED",
          "Too many requests",
          "Slow down: at most "
              + properties.rateLimitPerSecond()
              + " requests per second. Retry"
              + " with the same Idempotency-Key after Retry-After seconds.");
      return;
    }
    long length = request.getContentLengthLong();
    if (length > properties.maxBodyBytes()) {
      write(response, 413, "PAYLOAD_TOO_LARGE", "Request body too large", tooLarge());
      return;
    }
    Principal principal = () -> tenant;
    chain.doFilter(new GatedRequest(request, principal, properties.maxBodyBytes()), response);
  }

  private String tooLarge() {
    return "Request bodies are limited to " + properties.maxBodyBytes() + " bytes.";
  }

  private static String keyOwner(String authorization, Map<String, String> keys) {
    if (authorization == null || !authorization.startsWith("Bearer ")) {
      return null;
    }
    return keys.get(authorization.substring("Bearer ".length()).trim());
  }

  /** A fixed one-second window per tenant; enough for a demo and for the "no record" test. */
  private boolean allowed(String tenant) {
    int limit = properties.rateLimitPerSecond();
    if (limit <= 0) {
      return true;
    }
    long second = System.currentTimeMillis() / 1000;
    Window w =
        windows.compute(
            tenant, (t, old) -> old == null || old.second != second ? new Window(second) : old);
    return w.count.incrementAndGet() <= limit;
  }

  private static final class Window {
    final long second;
    final AtomicLong count = new AtomicLong();

    Window(long second) {
      this.second = second;
    }
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
      return principal;
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
