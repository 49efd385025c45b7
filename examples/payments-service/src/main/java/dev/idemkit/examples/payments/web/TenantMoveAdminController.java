package dev.idemkit.examples.payments.web;

import dev.idemkit.examples.payments.shards.TenantMoves;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Size;
import java.sql.SQLException;
import org.springframework.http.HttpStatus;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only): moves a tenant to another shard when the service runs on
 * shards ({@code idemkit.shards.*}, docs/scaling.md "Moving a tenant"). While it moves, the
 * tenant's requests are answered 503 {@code TENANT_MOVING} with {@code Retry-After}; other tenants
 * are served.
 */
@RestController
public class TenantMoveAdminController extends OperatorEndpoints {

  /** The errorCode of a move on a service that runs on one database. */
  static final String NOT_SHARDED = "NOT_SHARDED";

  /** The errorCode of a move to a shard the service does not have. */
  static final String SHARD_NOT_FOUND = "SHARD_NOT_FOUND";

  /** The errorCode of a move while the tenant is moving to another shard. */
  static final String TENANT_MOVING_ELSEWHERE = "TENANT_MOVING_ELSEWHERE";

  /** Where to move the tenant. */
  public record TenantMoveRequest(@NotBlank @Size(max = 100) @InputText.Plain String shard) {}

  private final TenantMoves moves;

  public TenantMoveAdminController(TenantMoves moves) {
    this.moves = moves;
  }

  /**
   * Moves the tenant with every row the service keeps of it, losing none and keeping every key's
   * answer; returns once no other shard holds its rows. Calling it again with the same shard
   * finishes an interrupted move, or confirms the tenant is there ({@code from} is then that
   * shard).
   */
  @Operation(operationId = "moveTenant", summary = "Move a tenant to another shard")
  @PostMapping("/v1/admin/tenants/{tenant}/move")
  @ProblemAnswer(status = 400, errorCodes = "INVALID_PATH_PARAMETER")
  @ProblemAnswer(status = 404, errorCodes = SHARD_NOT_FOUND)
  @ProblemAnswer(
      status = 409,
      errorCodes = {NOT_SHARDED, TENANT_MOVING_ELSEWHERE})
  @ApiResponse(
      responseCode = "200",
      description = "The tenant, the shard it was on and the shard it is on now",
      content = @Content(schema = @Schema(implementation = AdminAnswers.TenantMoved.class)))
  public AdminAnswers.TenantMoved move(
      @PathVariable String tenant, @Valid @RequestBody TenantMoveRequest request)
      throws SQLException {
    String name = tenant(tenant);
    if (!moves.sharded()) {
      throw conflict(
          NOT_SHARDED,
          "The service runs on one database (no idemkit.shards.* is configured): nothing moves.");
    }
    if (!moves.isShard(request.shard())) {
      throw Errors.notFound(
          SHARD_NOT_FOUND,
          "No shard " + request.shard() + ": name one of idemkit.shards.*. Nothing moved.");
    }
    try {
      TenantMoves.Moved moved = moves.move(name, request.shard());
      return new AdminAnswers.TenantMoved(moved.tenant(), moved.from(), moved.shard());
    } catch (IllegalStateException e) {
      throw conflict(TENANT_MOVING_ELSEWHERE, e.getMessage() + ".");
    }
  }

  private static ErrorResponseException conflict(String errorCode, String detail) {
    return new ErrorResponseException(
        HttpStatus.CONFLICT,
        Errors.problem(HttpStatus.CONFLICT, errorCode, "Tenant not moved", detail),
        null);
  }
}
