package dev.idemkit.examples.payments.web;

import java.security.Principal;

/**
 * An operator authenticated with an admin API key. Its own type, not a name convention, so that no
 * tenant name can ever pass for an operator: the admin endpoints check for this type themselves.
 *
 * @param operator the operator the admin key belongs to
 */
public record OperatorPrincipal(String operator) implements Principal {

  @Override
  public String getName() {
    return "admin:" + operator;
  }
}
