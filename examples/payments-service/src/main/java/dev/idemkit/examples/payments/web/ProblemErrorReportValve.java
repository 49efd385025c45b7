package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.ErrorCode;
import dev.idemkit.spring.boot.Problems;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.tomcat.util.res.StringManager;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Requests Tomcat refuses before any application code runs (a control character in a header, a
 * malformed request line, a path with an encoded {@code /} or {@code \}, a NUL or invalid UTF-8,
 * headers too large or too many) are answered in the API's own format: problem+json with an
 * errorCode, not Tomcat's HTML page. A refused path gets the gate's own 400 {@code MALFORMED_PATH},
 * saying what is wrong with it. Tomcat's messages are recognised in the JVM's language, through
 * Tomcat's own message bundles.
 */
public class ProblemErrorReportValve extends ErrorReportValve {

  /** Tomcat's message for headers over {@code server.max-http-request-header-size}. */
  private static final String HEADER_TOO_LARGE =
      StringManager.getManager("org.apache.coyote.http11")
          .getString("iib.requestheadertoolarge.error");

  /** The stable errorCode of a request with more header fields than the server accepts. */
  static final String TOO_MANY_HEADERS = "TOO_MANY_HEADERS";

  @Override
  protected void report(Request request, Response response, Throwable failure) {
    int status = response.getStatus();
    if (status < 400 || response.isCommitted() || response.getContentWritten() > 0) {
      return;
    }
    String message = failure == null ? "" : String.valueOf(failure.getMessage());
    // A key on GET or HEAD is ignored (contract §2): a header HTTP does not allow is then a
    // malformed request, not a malformed key.
    String method = request.getMethod();
    boolean badKey =
        message.contains("[Idempotency-Key:") && !"GET".equals(method) && !"HEAD".equals(method);
    int maxHeaderCount = maxHeaderCount(request);
    // Tomcat answers 400 to headers over server.max-http-request-header-size, and to more header
    // fields than its maxHeaderCount (100 by default); HTTP says 431 for both.
    boolean headersTooLarge = status == 400 && message.contains(HEADER_TOO_LARGE);
    boolean tooManyHeaders =
        status == 400
            && maxHeaderCount >= 0
            && message.contains(
                StringManager.getManager("org.apache.tomcat.util.http")
                    .getString("headers.maxCountFail", Integer.valueOf(maxHeaderCount)));
    if (headersTooLarge || tooManyHeaders) {
      status = 431;
      response.setStatus(status);
    }
    String uri = request.getRequestURI();
    boolean badPath =
        !badKey
            && status == 400
            && uri != null
            && !uri.isEmpty()
            && RequestPaths.canonical(uri).isEmpty();
    byte[] body =
        tooManyHeaders
            ? Problems.body(
                431,
                TOO_MANY_HEADERS,
                "Too many request headers",
                "The request has more than "
                    + maxHeaderCount
                    + " header fields, the most this server accepts. Send fewer headers.")
            : headersTooLarge
                ? Problems.body(
                    431,
                    "REQUEST_HEADER_TOO_LARGE",
                    "Request headers too large",
                    "The request's headers are larger than this server accepts. An"
                        + " Idempotency-Key has at most 255 characters; send shorter headers.")
                : badPath
                    ? Problems.body(
                        400,
                        ApiGateFilter.MALFORMED_PATH,
                        "Malformed path",
                        ApiGateFilter.malformedPathDetail(uri))
                    : badKey
                        ? Problems.body(
                            400,
                            ErrorCode.IDEMPOTENCY_KEY_INVALID.code(),
                            "Idempotency-Key invalid",
                            "The Idempotency-Key header has a character HTTP does not allow. Send"
                                + " one key of 1-255 visible ASCII characters.")
                        : statusProblem(status, method);
    try {
      response.setContentType(Problems.PROBLEM_JSON.toString());
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
      response.finishResponse();
    } catch (IOException | IllegalStateException e) {
      // The connection is gone; nothing more to say.
    }
  }

  /**
   * The problem for a refusal known only by its status (and the request's method), as Tomcat or a
   * {@code sendError} leaves it: shared with {@link ProblemErrorController}.
   */
  static byte[] statusProblem(int status, String method) {
    return switch (status) {
      case 400 ->
          Problems.body(
              400,
              "MALFORMED_REQUEST",
              "Request refused",
              "The request is not valid HTTP/1.1 (a header or the request line has characters it"
                  + " does not allow). Fix it and send it again.");
      case 404 ->
          // e.g. an unknown health group: the endpoint answered 404 with no body.
          Problems.body(404, "NOT_FOUND", "Not found", "No such endpoint.");
      case 405 ->
          Problems.body(
              405,
              "METHOD_NOT_ALLOWED",
              "Method not allowed",
              "This service does not answer "
                  + method
                  + " here: the Allow header lists the methods it serves, and the OpenAPI"
                  + " document (/v3/api-docs) each endpoint's own.");
      case 500 ->
          Problems.body(
              500,
              "INTERNAL_ERROR",
              "Internal error",
              "Something failed on our side. Retry with the same Idempotency-Key: nothing happens"
                  + " twice.");
      default ->
          Problems.body(
              status,
              "HTTP_" + status,
              "Request refused",
              "The server does not serve this request (HTTP " + status + ").");
    };
  }

  /** The connector's limit on header fields, or -1 if it is not an HTTP/1.1 connector. */
  private static int maxHeaderCount(Request request) {
    return request.getConnector() != null
            && request.getConnector().getProtocolHandler()
                instanceof AbstractHttp11Protocol<?> http11
        ? http11.getMaxHeaderCount()
        : -1;
  }

  /** Installs the valve on the embedded Tomcat. */
  @Configuration(proxyBeanMethods = false)
  static class Installer {
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
      return factory ->
          factory.addContextCustomizers(
              context ->
                  ((StandardHost) context.getParent())
                      .setErrorReportValveClass(ProblemErrorReportValve.class.getName()));
    }
  }
}
