package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.EmbeddedDataDirInUseException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Start-up failed because the embedded database folder is in use: Spring Boot prints the one-line
 * reason and what to do, instead of a stack trace.
 */
class EmbeddedDataDirInUseFailureAnalyzer
    extends AbstractFailureAnalyzer<EmbeddedDataDirInUseException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, EmbeddedDataDirInUseException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "To share its database, start this one with --idemkit.embedded.join=true; for a database"
            + " of its own, with --idemkit.embedded.data-dir=<another folder>.",
        cause);
  }
}
