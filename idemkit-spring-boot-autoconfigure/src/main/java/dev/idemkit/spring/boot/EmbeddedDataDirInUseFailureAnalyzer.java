package dev.idemkit.spring.boot;

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
        "Share the running instance's database (--idemkit.embedded.join=true), or give this"
            + " instance its own folder (--idemkit.embedded.data-dir=…).",
        cause);
  }
}
