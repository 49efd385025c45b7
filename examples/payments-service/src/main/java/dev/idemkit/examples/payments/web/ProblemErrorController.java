package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.Problems;
import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * What the container's error page ({@code server.error.path}, {@code /error}) answers, in place of
 * Spring Boot's own JSON ({@code {"timestamp":…,"error":…}}): the API's problem+json with an
 * errorCode. The container forwards there what it refuses after routing began, and every {@code
 * sendError}: TRACE (Tomcat refuses it with 405 and its {@code Allow} header, which stays), an
 * exception thrown by a filter (500, logged by Tomcat). Asked for directly, {@code /error} is a 404
 * ({@link ApiGateFilter}); it is no operation of the API document.
 */
@RestController
@Hidden
public class ProblemErrorController implements ErrorController {

  @RequestMapping("${server.error.path:/error}")
  ResponseEntity<byte[]> error(HttpServletRequest request) {
    Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
    int status = code instanceof Integer i && i >= 400 ? i : 500;
    // The error page is dispatched as a GET; the method the client sent is kept here.
    Object method = request.getAttribute(RequestDispatcher.ERROR_METHOD);
    return ResponseEntity.status(status)
        .contentType(Problems.PROBLEM_JSON)
        .body(
            ProblemErrorReportValve.statusProblem(
                status, method instanceof String m ? m : request.getMethod()));
  }
}
