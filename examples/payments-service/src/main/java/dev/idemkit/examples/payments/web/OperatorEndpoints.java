package dev.idemkit.examples.payments.web;

import dev.idemkit.Scope;
import java.security.Principal;
import org.springframework.web.bind.annotation.ModelAttribute;

/**
 * What every operator controller extends: each of its endpoints checks for an operator itself
 * ({@link #operatorsOnly}), whatever the gate in front ({@link ApiGateFilter}) decided. A gap in
 * the gate must not open records or events of every tenant. A base class rather than advice matched
 * by name, so that an operator controller cannot lose the check by being moved or renamed.
 */
abstract class OperatorEndpoints {

  /** Runs before every endpoint of the controller: operators only, else 403 {@code FORBIDDEN}. */
  @ModelAttribute
  void operatorsOnly(Principal principal) {
    if (!(principal instanceof OperatorPrincipal)) {
      throw Errors.forbidden("Operator endpoints take an admin API key.");
    }
  }

  /** A name a tenant can have (the rules of {@link Scope}), else 400 and nothing is done. */
  static String tenant(String tenant) {
    try {
      return Scope.of(tenant, "operator").tenant();
    } catch (IllegalArgumentException e) {
      throw Errors.badRequest(
          "INVALID_PATH_PARAMETER",
          "Invalid tenant",
          "No tenant can be named this way: " + e.getMessage() + ".");
    }
  }
}
