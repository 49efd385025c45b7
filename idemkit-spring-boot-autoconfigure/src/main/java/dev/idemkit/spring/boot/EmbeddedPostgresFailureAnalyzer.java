package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.EmbeddedDataDirInUseException;
import dev.idemkit.jdbc.NoEmbeddedPostgresException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Start-up failed because the embedded default could not start its PostgreSQL: the data folder is
 * in use by another running instance, or the class path has no binaries for this platform (e.g.
 * Linux on ARM64). Spring Boot prints the one-line reason and what to do, instead of a stack trace.
 */
class EmbeddedPostgresFailureAnalyzer extends AbstractFailureAnalyzer<IllegalStateException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, IllegalStateException cause) {
    EmbeddedDataDirInUseException inUse =
        findCause(rootFailure, EmbeddedDataDirInUseException.class);
    if (inUse != null) {
      return new FailureAnalysis(
          inUse.getMessage(),
          "To share its database, start this one with --idemkit.embedded.join=true; for a"
              + " database of its own, with --idemkit.embedded.data-dir=<another folder>.",
          inUse);
    }
    NoEmbeddedPostgresException noBinaries =
        findCause(rootFailure, NoEmbeddedPostgresException.class);
    if (noBinaries != null) {
      return new FailureAnalysis(
          noBinaries.getMessage(),
          "Point the application at a PostgreSQL of your own: spring.datasource.url (with"
              + " spring.datasource.username and spring.datasource.password).",
          noBinaries);
    }
    return null;
  }
}
