package dev.idemkit;

import java.util.Objects;

/** The identity of one idempotency record: a key within its scope. */
public record ScopedKey(Scope scope, IdempotencyKey key) {

  public ScopedKey {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(key, "key");
  }

  public static ScopedKey of(String tenant, String operation, String key) {
    return new ScopedKey(Scope.of(tenant, operation), IdempotencyKey.of(key));
  }

  public String tenant() {
    return scope.tenant();
  }

  public String operation() {
    return scope.operation();
  }

  /** A log-safe description: names the scope, never a body. */
  @Override
  public String toString() {
    return scope.tenant() + "/" + scope.operation() + "/" + key.value();
  }
}
