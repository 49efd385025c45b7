package dev.idemkit;

import java.util.Objects;

/**
 * Where a key lives: the tenant (the authenticated principal's account) and the operation (a stable
 * name such as {@code create_payment}). The same key in another scope is another operation; keys
 * are never global.
 */
public record Scope(String tenant, String operation) {

  /** Longest tenant or operation name accepted. */
  public static final int MAX_LENGTH = 200;

  public Scope {
    tenant = requireName("tenant", tenant);
    operation = requireName("operation", operation);
  }

  public static Scope of(String tenant, String operation) {
    return new Scope(tenant, operation);
  }

  private static String requireName(String what, String value) {
    Objects.requireNonNull(value, what);
    if (value.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
    if (value.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          what + " is " + value.length() + " characters; at most " + MAX_LENGTH + " are allowed");
    }
    return value;
  }
}
