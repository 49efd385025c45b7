package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.ErrorCode;
import dev.idemkit.spring.boot.Problems;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Requests Tomcat refuses before any application code runs (a control character in a header, a
 * malformed request line, a path with an encoded {@code /} or {@code \}, a NUL or invalid UTF-8,
 * headers too large) are answered in the API's own format: problem+json with an errorCode, not
 * Tomcat's HTML page. A refused path gets the gate's own 400 {@code MALFORMED_PATH}.
 */
public class ProblemErrorReportValve extends ErrorReportValve {

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
    // Tomcat answers 400 to headers over server.max-http-request-header-size; HTTP says 431.
    boolean headersTooLarge = status == 400 && message.contains("Request header is too large");
    if (headersTooLarge) {
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
        headersTooLarge
            ? Problems.body(
                431,
                "REQUEST_HEADER_TOO_LARGE",
                "Request headers too large",
                "The request's headers are larger than this server accepts. An Idempotency-Key"
                    + " has at most 255 characters; send shorter headers.")
            : badPath
                ? Problems.body(
                    400,
                    ApiGateFilter.MALFORMED_PATH,
                    "Malformed path",
                    ApiGateFilter.MALFORMED_PATH_DETAIL)
                : badKey
                    ? Problems.body(
                        400,
                        ErrorCode.IDEMPOTENCY_KEY_INVALID.code(),
                        "Idempotency-Key invalid",
                        "The Idempotency-Key header has a character HTTP does not allow. Send one key of"
                            + " 1-255 visible ASCII characters.")
                    : status == 400
                        ? Problems.body(
                            400,
                            "MALFORMED_REQUEST",
                            "Request refused",
                            "The request is not valid HTTP/1.1 (a header or the request line has"
                                + " characters it does not allow). Fix it and send it again.")
                        : status == 404
                            // e.g. an unknown health group: the endpoint answered 404 with no body.
                            ? Problems.body(404, "NOT_FOUND", "Not found", "No such endpoint.")
                            : Problems.body(
                                status,
                                "HTTP_" + status,
                                "Request refused",
                                "The server does not serve this request (HTTP " + status + ").");
    try {
      response.setContentType(Problems.PROBLEM_JSON.toString());
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
      response.finishResponse();
    } catch (IOException | IllegalStateException e) {
      // The connection is gone; nothing more to say.
    }
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
