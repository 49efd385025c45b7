package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.IssuedKeys;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.security.Principal;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Server-issued keys (the "prepare" step of seed 001): an opaque key bound to the caller's tenant,
 * one operation and an expiry. Operations in {@code idemkit.issued-keys.strict-operations} accept
 * no other key.
 */
@RestController
public class IdempotencyKeysController {

  /** The operations a key can be issued for. */
  public static final String OPERATIONS = "create_payment|confirm_payment|create_order";

  private final IssuedKeys keys;

  public IdempotencyKeysController(IssuedKeys keys) {
    this.keys = keys;
  }

  public record IssueKeyRequest(
      @NotNull
          @Pattern(
              regexp = OPERATIONS,
              message = "must be one of create_payment, confirm_payment, create_order")
          String operation) {}

  public record IssuedKeyResponse(String key, String operation, String expiresAt) {}

  @PostMapping(path = "/v1/idempotency-keys", consumes = "application/json")
  @ResponseStatus(HttpStatus.CREATED)
  public IssuedKeyResponse issue(Principal tenant, @Valid @RequestBody IssueKeyRequest request) {
    IssuedKeys.Issued issued = keys.issue(tenant.getName(), request.operation());
    return new IssuedKeyResponse(
        issued.key().value(), request.operation(), issued.expiresAt().toString());
  }
}
