package dev.idemkit.examples.payments.web;

import dev.idemkit.DataProtection;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Scope;
import dev.idemkit.ScopedKey;
import dev.idemkit.examples.payments.shards.OperatorShards;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.StoreCapabilities;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.security.Principal;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only, see {@link ApiGateFilter}): the records that need recovery,
 * one scope's record with the history of its phases ({@link RecordViews}), and an operator's
 * resolution of an unknown outcome. Never a stored body: it may hold personal data. The
 * data-protection endpoints of the admin API are {@link DataProtectionAdminController}'s.
 *
 * <p>Every endpoint here checks for an operator itself ({@link OperatorEndpoints}), whatever the
 * gate in front decided: a gap in the gate must not open records of every tenant.
 */
@RestController
public class AdminController extends OperatorEndpoints {

  /** The refusals of the endpoints that name a record, by its key in the path or the query. */
  @Target(ElementType.ANNOTATION_TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @ProblemAnswer(
      status = 400,
      errorCodes = {"INVALID_PATH_PARAMETER", "IDEMPOTENCY_KEY_INVALID"})
  @ProblemAnswer(status = 404, errorCodes = "RECORD_NOT_FOUND")
  @interface RecordLookupProblems {}

  /** The answers of the endpoints that resolve a record. */
  @Target(ElementType.METHOD)
  @Retention(RetentionPolicy.RUNTIME)
  @RecordLookupProblems
  @ProblemAnswer(
      status = 409,
      errorCodes = {"RECORD_NOT_AWAITING_RESOLUTION", "RESOLUTION_CONFLICT"})
  @ProblemAnswer(status = 422, errorCodes = "RESOLUTION_INVALID")
  @ApiResponse(
      responseCode = "200",
      description = "The record after the resolution, with its history",
      content = @Content(schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  @interface ResolutionAnswers {}

  /** The answers of the endpoints that read a record. */
  @Target(ElementType.METHOD)
  @Retention(RetentionPolicy.RUNTIME)
  @RecordLookupProblems
  @ApiResponse(
      responseCode = "200",
      description = "The record, with its history",
      content = @Content(schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  @interface RecordAnswers {}

  private final IdempotencyStore store;

  /**
   * The store through data protection, as the engine sees it: an operator's external reference (a
   * charge id) is sealed like the rest of the recovery data. Built once; it holds no state of its
   * own beyond the protection's key cache.
   */
  private final IdempotencyStore protectedStore;

  /** The raw store's recovery administration: its lists (records shown as stored). */
  private final RecoveryAdministration administration;

  /** {@link #protectedStore}'s recovery administration: verdicts sealed as recovery data is. */
  private final RecoveryAdministration protectedAdministration;

  private final JdbcClient jdbc;
  private final OperatorShards shards;

  public AdminController(
      IdempotencyStore store, JdbcClient jdbc, DataProtection protection, OperatorShards shards) {
    this.store = store;
    this.shards = shards;
    this.protectedStore = protection.protect(store);
    this.administration =
        StoreCapabilities.require(store, RecoveryAdministration.class, "the admin API");
    this.protectedAdministration =
        StoreCapabilities.require(protectedStore, RecoveryAdministration.class, "the admin API");
    this.jdbc = jdbc;
  }

  /**
   * Every record whose outcome is not settled, each with {@code attention} saying which kind: the
   * records needing recovery now ({@code records}, {@code DUE}), those whose unknown outcome waits
   * out its back-off before the next automatic attempt ({@code waiting}, {@code
   * WAITING_FOR_NEXT_ATTEMPT}, with {@code recoveryAttempts} and {@code nextAttemptAt}), and those
   * escalated to an operator ({@code escalated}, {@code AWAITING_OPERATOR}: their outcome stayed
   * unknown after the last automatic attempt): resolve those with {@link #resolve}.
   */
  @Operation(
      operationId = "listRecoveryRecords",
      summary =
          "Records due for recovery, waiting for their next recovery attempt, or escalated to an"
              + " operator")
  @GetMapping("/v1/admin/idempotency/recovery")
  @ApiResponse(
      responseCode = "200",
      description = "Records due for recovery, waiting for their next attempt, and escalated",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.RecoveryRecords.class)))
  public Map<String, Object> needingRecovery(@RequestParam(defaultValue = "100") int limit)
      throws SQLException {
    int bounded = Math.min(Math.max(limit, 1), 1000);
    List<Map<String, Object>> records =
        shards.listOnEach(() -> store.findNeedingRecovery(bounded)).stream()
            .limit(bounded)
            .map(r -> RecordViews.listed(r, "DUE"))
            .toList();
    List<Map<String, Object>> waiting =
        shards.listOnEach(() -> administration.findAwaitingNextAttempt(bounded)).stream()
            .limit(bounded)
            .map(
                r -> {
                  Map<String, Object> m = RecordViews.listed(r, "WAITING_FOR_NEXT_ATTEMPT");
                  // The back-off sets the lease and the next attempt together.
                  m.put("nextAttemptAt", r.lockedUntil().toString());
                  return m;
                })
            .toList();
    List<Map<String, Object>> escalated =
        shards.listOnEach(() -> administration.findEscalated(bounded)).stream()
            .limit(bounded)
            .map(r -> RecordViews.listed(r, "AWAITING_OPERATOR"))
            .toList();
    return Map.of(
        "records",
        records,
        "count",
        records.size(),
        "waiting",
        waiting,
        "waitingCount",
        waiting.size(),
        "escalated",
        escalated,
        "escalatedCount",
        escalated.size());
  }

  /**
   * An operator's verdict on an unknown outcome, and why. The external reference is the provider's
   * (a charge id), passed on as it is written: no control or invisible character, which would be
   * stored with the record and sent to the provider by every recovery attempt.
   */
  public record Resolution(
      @NotNull @Pattern(regexp = "APPLIED|NOT_APPLIED") String outcome,
      @Size(min = 1, max = 200) @InputText.Reference String externalReference,
      @NotBlank @Size(max = 500) @InputText.Plain String reason) {}

  /**
   * Resolves a record whose external call has an unknown outcome: {@code APPLIED} with the
   * provider's reference (e.g. the charge id found in its dashboard) completes the operation with
   * it; {@code NOT_APPLIED} makes the call run again under the same derived key. The record is due
   * for recovery at once: the recovery worker, or the client's next retry, finishes it. Operators
   * only (admin API keys); the record's history keeps who and why.
   *
   * <p>Until recovery acts on a resolution, the same resolution sent again (same outcome and
   * reference, say a retried request) is answered as the first and changes nothing; a different one
   * is refused with 409 {@code RESOLUTION_CONFLICT} and changes nothing either. It merged into the
   * first before (the later outcome and reference won, silently).
   */
  @Operation(
      operationId = "resolveRecord",
      summary = "Resolve a record whose external outcome is unknown")
  @PostMapping(
      path = "/v1/admin/idempotency/records/{tenant}/{operation}/{key}/resolution",
      consumes = "application/json")
  @ResolutionAnswers
  public Map<String, Object> resolve(
      Principal operator,
      @PathVariable String tenant,
      @PathVariable String operation,
      @PathVariable String key,
      @Valid @RequestBody Resolution request)
      throws SQLException {
    ScopedKey id = scopedKey(tenant, operation, key);
    return shards.onTenant(tenant, () -> resolveOnItsShard(operator, id, request));
  }

  private Map<String, Object> resolveOnItsShard(
      Principal operator, ScopedKey id, Resolution request) {
    boolean applied = "APPLIED".equals(request.outcome());
    if (applied == (request.externalReference() == null)) {
      throw Errors.unprocessable(
          "RESOLUTION_INVALID",
          "Resolution invalid",
          applied
              ? "An APPLIED outcome needs the externalReference of the effect (e.g. the charge id)."
              : "A NOT_APPLIED outcome has no externalReference.");
    }
    IdempotencyRecord before =
        store
            .find(id)
            .orElseThrow(() -> Errors.notFound("RECORD_NOT_FOUND", "No record for " + id + "."));
    OperatorResolution verdict =
        applied
            ? OperatorResolution.applied(request.externalReference())
            : OperatorResolution.notApplied();
    boolean done =
        protectedAdministration.resolve(id, verdict, operator.getName(), request.reason());
    if (!done) {
      // A resolution recovery has not acted on yet (the store takes no second one): read through
      // data protection, so that its reference is compared in the clear.
      Optional<OperatorResolution> pending =
          protectedStore.find(id).flatMap(OperatorResolution::pendingIn);
      if (pending.isPresent() && pending.get().equals(verdict)) {
        return recordOnItsShard(id); // the same resolution again: answered as the first
      }
      if (pending.isPresent()) {
        throw new ErrorResponseException(
            HttpStatus.CONFLICT,
            Errors.problem(
                HttpStatus.CONFLICT,
                "RESOLUTION_CONFLICT",
                "Record already resolved differently",
                "Record "
                    + id
                    + " already has an operator's resolution ("
                    + pending.get().outcome()
                    + ") that recovery has not acted on yet; this one differs and was not taken."
                    + " Nothing changed. Read the record and its history (who and why), and"
                    + " settle it with whoever resolved it; once recovery has acted on the first,"
                    + " a record still unknown takes a new resolution."),
            null);
      }
      throw new ErrorResponseException(
          HttpStatus.CONFLICT,
          Errors.problem(
              HttpStatus.CONFLICT,
              "RECORD_NOT_AWAITING_RESOLUTION",
              "Record not awaiting resolution",
              "Record "
                  + id
                  + " is "
                  + before.state()
                  + " (or is being recovered right now): only a record whose external outcome is"
                  + " unknown takes a resolution. Read it again."),
          null);
    }
    return recordOnItsShard(id);
  }

  /**
   * {@link #resolve} for a key that a path cannot carry: a key is any visible ASCII text, and one
   * holding {@code /}, {@code \}, {@code %} or {@code ;} (or being {@code .} or {@code ..}) is
   * refused by the gate as a path segment (400 {@code MALFORMED_PATH}), so its record could not be
   * resolved at all. Here the key is the query parameter {@code key}, percent-encoded.
   */
  @Operation(
      operationId = "resolveRecordByKeyParameter",
      summary = "Resolve a record whose key a path cannot carry (key in the query)")
  @PostMapping(
      path = "/v1/admin/idempotency/records/{tenant}/{operation}/resolution",
      params = "key",
      consumes = "application/json")
  @ResolutionAnswers
  public Map<String, Object> resolveByKeyParameter(
      Principal operator,
      @PathVariable String tenant,
      @PathVariable String operation,
      @RequestParam String key,
      @Valid @RequestBody Resolution request)
      throws SQLException {
    return resolve(operator, tenant, operation, key, request);
  }

  /** {@link #record} for a key that a path cannot carry (see {@link #resolveByKeyParameter}). */
  @Operation(
      operationId = "getRecordByKeyParameter",
      summary = "A record whose key a path cannot carry (key in the query)")
  @GetMapping(path = "/v1/admin/idempotency/records/{tenant}/{operation}", params = "key")
  @RecordAnswers
  public Map<String, Object> recordByKeyParameter(
      @PathVariable String tenant, @PathVariable String operation, @RequestParam String key)
      throws SQLException {
    return record(tenant, operation, key);
  }

  @Operation(operationId = "getRecord", summary = "A record, its phases and history")
  @GetMapping("/v1/admin/idempotency/records/{tenant}/{operation}/{key}")
  @RecordAnswers
  public Map<String, Object> record(
      @PathVariable String tenant, @PathVariable String operation, @PathVariable String key)
      throws SQLException {
    ScopedKey id = scopedKey(tenant, operation, key);
    return shards.onTenant(tenant, () -> recordOnItsShard(id));
  }

  private Map<String, Object> recordOnItsShard(ScopedKey id) {
    IdempotencyRecord record =
        store
            .find(id)
            .orElseThrow(() -> Errors.notFound("RECORD_NOT_FOUND", "No record for " + id + "."));
    Map<String, Object> answer = RecordViews.describe(record);
    answer.put("history", RecordViews.history(jdbc, record));
    return answer;
  }

  /** The scope named by the path, or a 400 if no record can have it (never a 500). */
  private static ScopedKey scopedKey(String tenant, String operation, String key) {
    try {
      return new ScopedKey(Scope.of(tenant, operation), IdempotencyKey.of(key));
    } catch (IllegalArgumentException e) {
      throw Errors.badRequest(
          e instanceof InvalidIdempotencyKeyException
              ? InvalidIdempotencyKeyException.ERROR_CODE
              : "INVALID_PATH_PARAMETER",
          "Invalid record lookup",
          "No record can have this scope: " + e.getMessage() + ".");
    }
  }
}
