package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.NoEmbeddedPostgresException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Start-up failed because the embedded default has no PostgreSQL for this platform (e.g. Linux on
 * ARM64): Spring Boot prints that line and how to use a PostgreSQL of one's own instead.
 */
class NoEmbeddedPostgresFailureAnalyzer
    extends AbstractFailureAnalyzer<NoEmbeddedPostgresException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, NoEmbeddedPostgresException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "Point the application at a PostgreSQL of your own: spring.datasource.url (with"
            + " spring.datasource.username and spring.datasource.password).",
        cause);
  }
}
