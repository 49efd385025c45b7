package dev.idemkit.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Start-up failed on a key setting: Spring Boot prints its one line (which property, what is wrong)
 * and what to do, instead of a stack trace through the bean factory.
 */
class KeySettingFailureAnalyzer extends AbstractFailureAnalyzer<KeySettingException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, KeySettingException cause) {
    return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
  }
}
