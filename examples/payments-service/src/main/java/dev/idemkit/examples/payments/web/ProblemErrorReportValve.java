package dev.idemkit.examples.payments.web;

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
 * malformed request line) are answered in the API's own format: problem+json with an errorCode, not
 * Tomcat's HTML page.
 */
public class ProblemErrorReportValve extends ErrorReportValve {

  @Override
  protected void report(Request request, Response response, Throwable failure) {
    int status = response.getStatus();
    if (status < 400 || response.isCommitted() || response.getContentWritten() > 0) {
      return;
    }
    String message = failure == null ? "" : String.valueOf(failure.getMessage());
    boolean badKey = message.contains("[Idempotency-Key:");
    byte[] body =
        badKey
            ? Problems.body(
                400,
                "IDEMPOTENCY_KEY_INVALID",
                "Idempotency-Key invalid",
                "The Idempotency-Key header has a character HTTP does not allow. Send one key of"
                    + " 1-255 visible ASCII characters.")
            : Problems.body(
                status,
                status == 400 ? "MALFORMED_REQUEST" : "HTTP_" + status,
                "Request refused",
                "The request is not valid HTTP/1.1 (a header or the request line has characters"
                    + " it does not allow). Fix it and send it again.");
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
