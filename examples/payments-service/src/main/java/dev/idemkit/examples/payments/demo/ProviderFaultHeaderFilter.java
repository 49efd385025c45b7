package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.web.FilterAnswers;
import dev.idemkit.examples.provider.Fault;
import dev.idemkit.spring.boot.Idempotent;
import dev.idemkit.spring.boot.Problems;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.springframework.core.annotation.Order;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;

/**
 * Demo mode: the {@code X-Provider-Fault} header asks the in-process provider simulator for a
 * failure. A name it does not know is refused here with 400 {@code UNKNOWN_PROVIDER_FAULT} before
 * any handler runs, so nothing is stored (the simulator would otherwise fail the charge with an
 * answer the payment can only read as an unknown outcome). A known one is kept for the thread
 * serving the request, until it ends, so that {@link EmbeddedProviderRequests} adds it to the
 * charges sent on the way; the payment code never sees it. With a real provider this filter does
 * not exist ({@link DemoConfiguration}): the header is ignored, and so is its content.
 */
@Order(2)
public class ProviderFaultHeaderFilter extends OncePerRequestFilter implements FilterAnswers {

  /** The header. */
  public static final String HEADER = "X-Provider-Fault";

  /** The fault the request this thread serves asked for; set only while the filter runs. */
  private static final ThreadLocal<String> REQUESTED = new ThreadLocal<>();

  /**
   * For the API document: the operations that call the provider (the phased ones) can be refused
   * with 400 {@code UNKNOWN_PROVIDER_FAULT}.
   */
  @Override
  public Map<Integer, List<String>> answers(HandlerMethod handler) {
    Idempotent idempotent = handler.getMethodAnnotation(Idempotent.class);
    return idempotent != null && idempotent.phased()
        ? Map.of(400, List.of("UNKNOWN_PROVIDER_FAULT"))
        : Map.of();
  }

  @Override
  protected boolean shouldNotFilter(HttpServletRequest request) {
    return request.getHeader(HEADER) == null;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    for (String value : Collections.list(request.getHeaders(HEADER))) {
      for (String name : value.split(",")) {
        if (!name.isBlank() && !known(name)) {
          byte[] body =
              Problems.body(
                  400,
                  "UNKNOWN_PROVIDER_FAULT",
                  "Unknown provider fault",
                  "X-Provider-Fault names a fault the simulator does not have. Use one or more of: "
                      + Arrays.stream(Fault.values())
                          .map(Fault::wireName)
                          .collect(Collectors.joining(", "))
                      + ".");
          response.setStatus(400);
          response.setContentType(Problems.PROBLEM_JSON.toString());
          response.getOutputStream().write(body);
          return;
        }
      }
    }
    // Several header lines are one list, as the simulator reads a single comma-separated one.
    REQUESTED.set(String.join(",", Collections.list(request.getHeaders(HEADER))));
    try {
      chain.doFilter(request, response);
    } finally {
      REQUESTED.remove();
    }
  }

  /** The fault asked for by the request this thread is serving, if it asked for one. */
  static Optional<String> requestedFault() {
    return Optional.ofNullable(REQUESTED.get());
  }

  private static boolean known(String name) {
    try {
      Fault.fromWireName(name);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
