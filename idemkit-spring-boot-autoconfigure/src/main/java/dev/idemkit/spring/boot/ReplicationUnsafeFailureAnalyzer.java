package dev.idemkit.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Start-up refused by the replication check: Spring Boot prints what the database showed and what
 * to do, instead of a stack trace through the bean factory.
 */
class ReplicationUnsafeFailureAnalyzer extends AbstractFailureAnalyzer<ReplicationUnsafeException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, ReplicationUnsafeException cause) {
    return new FailureAnalysis(
        "Idemkit's replication check refused the start: " + cause.getMessage(),
        "Replicate synchronously to every standby that can be promoted, with synchronous_commit on"
            + " (docs/failover.md), or set idemkit.database.replication-check=warn to start"
            + " anyway.",
        cause);
  }
}
