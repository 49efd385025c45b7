package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.demo.DemoSecrets.DemoSecretException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A demo secret outside the demo: its one line, with no stack trace. */
public class DemoSecretFailureAnalyzer extends AbstractFailureAnalyzer<DemoSecretException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, DemoSecretException cause) {
    return new FailureAnalysis(
        cause.reason(),
        cause.action() + " Only the embedded demo (no spring.datasource.url) takes the demo's.",
        cause);
  }
}
