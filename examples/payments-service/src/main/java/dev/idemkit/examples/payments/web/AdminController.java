package dev.idemkit.examples.payments.web;

import dev.idemkit.DataProtection;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Scope;
import dev.idemkit.ScopedKey;
import dev.idemkit.examples.payments.erasure.TenantErasure;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.RecoveryAdministration;
import dev.idemkit.spi.StoreCapabilities;
import dev.idemkit.spring.boot.IdemkitProperties;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.security.Principal;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only, see {@link ApiGateFilter}): the records that need recovery,
 * and one scope's record with the history of its phases. Never a stored body: it may hold personal
 * data.
 *
 * <p>Every endpoint here checks for an operator itself ({@link OperatorEndpoints}), whatever the
 * gate in front decided: a gap in the gate must not open records of every tenant.
 */
@RestController
public class AdminController extends OperatorEndpoints {

  /** The errorCode of a tenant data-key request naming no tenant of this service. */
  static final String TENANT_NOT_FOUND = "TENANT_NOT_FOUND";

  /** The errorCode of a re-wrap naming no master key, configured or in use. */
  static final String MASTER_KEY_NOT_FOUND = "MASTER_KEY_NOT_FOUND";

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
  private final DataProtection protection;
  private final ApiKeys apiKeys;
  private final TenantErasure erasure;

  /** The master keys configured here ({@code idemkit.protection.encryption.master-keys}). */
  private final Set<String> configuredMasterKeys;

  public AdminController(
      IdempotencyStore store,
      JdbcClient jdbc,
      DataProtection protection,
      ApiKeys apiKeys,
      TenantErasure erasure,
      IdemkitProperties idemkit) {
    this.store = store;
    this.erasure = erasure;
    this.protectedStore = protection.protect(store);
    this.administration =
        StoreCapabilities.require(store, RecoveryAdministration.class, "the admin API");
    this.protectedAdministration =
        StoreCapabilities.require(protectedStore, RecoveryAdministration.class, "the admin API");
    this.jdbc = jdbc;
    this.protection = protection;
    this.apiKeys = apiKeys;
    this.configuredMasterKeys =
        Set.copyOf(idemkit.getProtection().getEncryption().getMasterKeys().keySet());
  }

  /**
   * Crypto-shredding (e.g. a tenant's erasure request): destroys the tenant's data keys, so every
   * stored answer and recovery data of its records is unreadable for good, in the table, its
   * replicas and its backups. A retry of one of its keys then answers 410 {@code
   * IDEMPOTENCY_RECORD_UNREADABLE} and runs nothing. The tenant's new requests get a new key.
   *
   * <p>For a tenant an API key of this service names, or one that still holds data keys (a tenant
   * offboarded before its erasure); any other name is 404 {@code TENANT_NOT_FOUND}.
   */
  @Operation(
      operationId = "shredTenantDataKeys",
      summary = "Destroy a tenant's data keys (crypto-shredding)")
  @DeleteMapping("/v1/admin/tenants/{tenant}/data-keys")
  @ProblemAnswer(status = 400, errorCodes = "INVALID_PATH_PARAMETER")
  @ProblemAnswer(status = 404, errorCodes = TENANT_NOT_FOUND)
  @ProblemAnswer(status = 409, errorCodes = "TENANT_HAS_UNSETTLED_RECORDS")
  @ApiResponse(
      responseCode = "200",
      description = "The tenant and how many data keys were destroyed",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.TenantDataKeysDestroyed.class)))
  public Map<String, Object> shred(@PathVariable String tenant) {
    String name = tenant(tenant);
    if (!apiKeys.isTenant(name) && dataKeysOf(name) == 0) {
      throw Errors.notFound(
          TENANT_NOT_FOUND,
          "No tenant "
              + name
              + ": no API key of this service names it and it holds no data key. Nothing was"
              + " destroyed.");
    }
    requireSettled(name, false, "shred. No key was destroyed.");
    return Map.of("tenant", name, "destroyedKeys", protection.shredTenant(name));
  }

  /**
   * A tenant's erasure: deletes its payments, orders, ledger entries, receipts, shipments and the
   * payloads of its events and receipt mails ({@link TenantErasure}), then destroys its data keys
   * as {@link #shred} does. Its idempotency records stay, their answers unreadable, so that a retry
   * answers 410 and runs nothing; cleanup deletes them after their window.
   *
   * <p>Refused (409, nothing erased) while a record of the tenant is still running, being recovered
   * or awaiting an operator: it would write the tenant's rows again after the erasure. A name no
   * API key names that holds no data key and no row is 404 {@code TENANT_NOT_FOUND}.
   */
  @Operation(
      operationId = "eraseTenantData",
      summary = "Erase a tenant's business data and event payloads, and destroy its data keys")
  @DeleteMapping("/v1/admin/tenants/{tenant}/data")
  @ProblemAnswer(status = 400, errorCodes = "INVALID_PATH_PARAMETER")
  @ProblemAnswer(status = 404, errorCodes = TENANT_NOT_FOUND)
  @ProblemAnswer(status = 409, errorCodes = "TENANT_HAS_UNSETTLED_RECORDS")
  @ApiResponse(
      responseCode = "200",
      description = "The tenant, the rows erased per table and how many data keys were destroyed",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.TenantDataErased.class)))
  public Map<String, Object> erase(@PathVariable String tenant) {
    String name = tenant(tenant);
    requireSettled(name, true, "erase. Nothing was erased.");
    boolean known = apiKeys.isTenant(name) || dataKeysOf(name) > 0;
    Map<String, Integer> erased = erasure.erase(name);
    int destroyed = protection.shredTenant(name);
    if (!known && erased.values().stream().allMatch(n -> n == 0)) {
      throw Errors.notFound(
          TENANT_NOT_FOUND,
          "No tenant "
              + name
              + ": no API key of this service names it, and it holds no data key and no row.");
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("tenant", name);
    answer.put("erasedRows", erased);
    answer.put("destroyedKeys", destroyed);
    return answer;
  }

  /**
   * A record still due for recovery, or escalated and unresolved, needs its sealed recovery data to
   * finish: shredded, it could never finish, and would hold its place in the tenant's live-record
   * quota for good. Such records are settled first (resolved, or recovered). For an erasure, a
   * record still running counts too: it would write the tenant's rows again.
   */
  private void requireSettled(String name, boolean running, String then) {
    long unsettled =
        jdbc.sql(
                """
                select count(*) from idemkit_record
                 where tenant = :tenant
                   and (recovery_due is not null
                        or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY')
                        or (:running and state = 'IN_PROGRESS'))
                """)
            .param("tenant", name)
            .param("running", running)
            .query(Long.class)
            .single();
    if (unsettled > 0) {
      throw new ErrorResponseException(
          HttpStatus.CONFLICT,
          Errors.problem(
              HttpStatus.CONFLICT,
              "TENANT_HAS_UNSETTLED_RECORDS",
              "Tenant has unsettled records",
              unsettled
                  + " record(s) of tenant "
                  + name
                  + (running ? " are still running, or" : " are")
                  + " still being recovered or await an operator's resolution, and need"
                  + " their recovery data to finish. Resolve them (GET"
                  + " /v1/admin/idempotency/recovery lists them) or let recovery finish them,"
                  + " then "
                  + then),
          null);
    }
  }

  /**
   * Gives the tenant a new data key for new answers; older answers still replay. Only for a tenant
   * an API key of this service names: any other name is 404 {@code TENANT_NOT_FOUND}, and no key is
   * made (a typo would otherwise leave a key for nobody).
   */
  @Operation(operationId = "rotateTenantDataKey", summary = "Rotate a tenant's data key")
  @PostMapping("/v1/admin/tenants/{tenant}/data-keys")
  @ProblemAnswer(status = 400, errorCodes = "INVALID_PATH_PARAMETER")
  @ProblemAnswer(status = 404, errorCodes = TENANT_NOT_FOUND)
  @ApiResponse(
      responseCode = "200",
      description = "The tenant's new data key",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.TenantDataKey.class)))
  public Map<String, Object> rotate(@PathVariable String tenant) {
    String name = tenant(tenant);
    if (!apiKeys.isTenant(name)) {
      throw Errors.notFound(
          TENANT_NOT_FOUND,
          "No tenant " + name + ": no API key of this service names it. No key was made.");
    }
    return Map.of("tenant", name, "keyId", protection.rotateTenantKey(name));
  }

  /**
   * After a master key rotation: re-wraps under the current master key every tenant data key that
   * master key {@code masterKeyId} wraps, without touching a record ({@link
   * DataProtection#rewrapDataKeys}). Call it once every instance runs with the new key current;
   * then {@code masterKeyId} can be removed from configuration. Calling it again re-wraps nothing.
   *
   * <p>409 {@code MASTER_KEY_STILL_WRAPS_DATA_KEYS} if data keys wrapped by {@code masterKeyId}
   * remain afterwards: it is still current here, or another instance still runs with it current and
   * made a new data key meanwhile. 409 {@code MASTER_KEY_UNAVAILABLE} if this process cannot unwrap
   * with it (not configured here, or the KMS refuses). Nothing is lost in either case.
   *
   * <p>404 {@code MASTER_KEY_NOT_FOUND} if no master key has this id: none is configured here and
   * none wraps a data key (a typo, say). It answered 200 "nothing to re-wrap" before, which an
   * operator could take for the go-ahead to remove the real old key.
   */
  @Operation(
      operationId = "rewrapDataKeys",
      summary = "Re-wrap the data keys of a master key under the current master key")
  @PostMapping("/v1/admin/master-keys/{masterKeyId}/rewrap")
  @ProblemAnswer(status = 404, errorCodes = MASTER_KEY_NOT_FOUND)
  @ProblemAnswer(
      status = 409,
      errorCodes = {"MASTER_KEY_STILL_WRAPS_DATA_KEYS", "MASTER_KEY_UNAVAILABLE"})
  public Map<String, Object> rewrap(@PathVariable String masterKeyId) {
    if (!protection.decrypts()) {
      throw conflict(
          "MASTER_KEY_UNAVAILABLE",
          "Master key unavailable",
          "Encryption is not configured here (no master keys): there is nothing to re-wrap with.");
    }
    if (!configuredMasterKeys.contains(masterKeyId) && wrappedBy(masterKeyId) == 0) {
      throw Errors.notFound(
          MASTER_KEY_NOT_FOUND,
          "No master key "
              + masterKeyId
              + ": none is configured here by that id and none wraps a data key. Nothing was"
              + " re-wrapped. The master keys that wrap data keys: "
              + String.join(
                  ", ",
                  jdbc.sql("select distinct master_key_id from idemkit_data_key order by 1")
                      .query(String.class)
                      .list())
              + ".");
    }
    int rewrapped;
    try {
      rewrapped = protection.rewrapDataKeys(masterKeyId);
    } catch (IllegalStateException e) {
      throw conflict(
          "MASTER_KEY_UNAVAILABLE",
          "Master key unavailable",
          "The data keys of master key "
              + masterKeyId
              + " cannot be unwrapped here: "
              + e.getMessage()
              + ". Configure it until its data keys are re-wrapped.");
    }
    long remaining = wrappedBy(masterKeyId);
    if (remaining > 0) {
      throw conflict(
          "MASTER_KEY_STILL_WRAPS_DATA_KEYS",
          "Master key still wraps data keys",
          rewrapped
              + " data key(s) re-wrapped, but "
              + remaining
              + " are still wrapped by master key "
              + masterKeyId
              + ": it is still the current master key here, or another instance still runs with"
              + " it current. Make the new key current on every instance"
              + " (idemkit.protection.encryption.current-master-key), then call this again; keep "
              + masterKeyId
              + " configured until it answers 200.");
    }
    return Map.of("masterKeyId", masterKeyId, "rewrappedKeys", rewrapped, "remainingKeys", 0);
  }

  private static ErrorResponseException conflict(String errorCode, String title, String detail) {
    return new ErrorResponseException(
        HttpStatus.CONFLICT, Errors.problem(HttpStatus.CONFLICT, errorCode, title, detail), null);
  }

  /** How many data keys master key {@code masterKeyId} wraps. */
  private long wrappedBy(String masterKeyId) {
    return jdbc.sql("select count(*) from idemkit_data_key where master_key_id = ?")
        .param(masterKeyId)
        .query(Long.class)
        .single();
  }

  /** How many data keys {@code tenant} holds. */
  private long dataKeysOf(String tenant) {
    return jdbc.sql("select count(*) from idemkit_data_key where tenant = ?")
        .param(tenant)
        .query(Long.class)
        .single();
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
  public Map<String, Object> needingRecovery(@RequestParam(defaultValue = "100") int limit) {
    int bounded = Math.min(Math.max(limit, 1), 1000);
    List<Map<String, Object>> records =
        store.findNeedingRecovery(bounded).stream().map(r -> listed(r, "DUE")).toList();
    List<Map<String, Object>> waiting =
        administration.findAwaitingNextAttempt(bounded).stream()
            .map(
                r -> {
                  Map<String, Object> m = listed(r, "WAITING_FOR_NEXT_ATTEMPT");
                  // The back-off sets the lease and the next attempt together.
                  m.put("nextAttemptAt", r.lockedUntil().toString());
                  return m;
                })
            .toList();
    List<Map<String, Object>> escalated =
        administration.findEscalated(bounded).stream()
            .map(r -> listed(r, "AWAITING_OPERATOR"))
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

  private static Map<String, Object> listed(IdempotencyRecord r, String attention) {
    Map<String, Object> m = describe(r);
    m.put("attention", attention);
    return m;
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
  @ProblemAnswer(
      status = 400,
      errorCodes = {"INVALID_PATH_PARAMETER", "IDEMPOTENCY_KEY_INVALID"})
  @ProblemAnswer(status = 404, errorCodes = "RECORD_NOT_FOUND")
  @ProblemAnswer(
      status = 409,
      errorCodes = {"RECORD_NOT_AWAITING_RESOLUTION", "RESOLUTION_CONFLICT"})
  @ProblemAnswer(status = 422, errorCodes = "RESOLUTION_INVALID")
  @ApiResponse(
      responseCode = "200",
      description = "The record after the resolution, with its history",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  public Map<String, Object> resolve(
      Principal operator,
      @PathVariable String tenant,
      @PathVariable String operation,
      @PathVariable String key,
      @Valid @RequestBody Resolution request) {
    ScopedKey id = scopedKey(tenant, operation, key);
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
        return record(tenant, operation, key); // the same resolution again: answered as the first
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
    return record(tenant, operation, key);
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
  @ProblemAnswer(
      status = 400,
      errorCodes = {"INVALID_PATH_PARAMETER", "IDEMPOTENCY_KEY_INVALID"})
  @ProblemAnswer(status = 404, errorCodes = "RECORD_NOT_FOUND")
  @ProblemAnswer(
      status = 409,
      errorCodes = {"RECORD_NOT_AWAITING_RESOLUTION", "RESOLUTION_CONFLICT"})
  @ProblemAnswer(status = 422, errorCodes = "RESOLUTION_INVALID")
  @ApiResponse(
      responseCode = "200",
      description = "The record after the resolution, with its history",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  public Map<String, Object> resolveByKeyParameter(
      Principal operator,
      @PathVariable String tenant,
      @PathVariable String operation,
      @RequestParam String key,
      @Valid @RequestBody Resolution request) {
    return resolve(operator, tenant, operation, key, request);
  }

  /** {@link #record} for a key that a path cannot carry (see {@link #resolveByKeyParameter}). */
  @Operation(
      operationId = "getRecordByKeyParameter",
      summary = "A record whose key a path cannot carry (key in the query)")
  @GetMapping(path = "/v1/admin/idempotency/records/{tenant}/{operation}", params = "key")
  @ProblemAnswer(
      status = 400,
      errorCodes = {"INVALID_PATH_PARAMETER", "IDEMPOTENCY_KEY_INVALID"})
  @ProblemAnswer(status = 404, errorCodes = "RECORD_NOT_FOUND")
  @ApiResponse(
      responseCode = "200",
      description = "The record, with its history",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  public Map<String, Object> recordByKeyParameter(
      @PathVariable String tenant, @PathVariable String operation, @RequestParam String key) {
    return record(tenant, operation, key);
  }

  @Operation(operationId = "getRecord", summary = "A record, its phases and history")
  @GetMapping("/v1/admin/idempotency/records/{tenant}/{operation}/{key}")
  @ProblemAnswer(
      status = 400,
      errorCodes = {"INVALID_PATH_PARAMETER", "IDEMPOTENCY_KEY_INVALID"})
  @ProblemAnswer(status = 404, errorCodes = "RECORD_NOT_FOUND")
  @ApiResponse(
      responseCode = "200",
      description = "The record, with its history",
      content =
          @Content(
              mediaType = "application/json",
              schema = @Schema(implementation = AdminAnswers.RecordView.class)))
  public Map<String, Object> record(
      @PathVariable String tenant, @PathVariable String operation, @PathVariable String key) {
    ScopedKey id = scopedKey(tenant, operation, key);
    IdempotencyRecord record =
        store
            .find(id)
            .orElseThrow(() -> Errors.notFound("RECORD_NOT_FOUND", "No record for " + id + "."));
    Map<String, Object> answer = describe(record);
    List<Map<String, Object>> history =
        new ArrayList<>(
            jdbc.sql(
                    "select event, state, recovery_point, pending_external, fencing_token, at,"
                        + " actor, reason, fingerprint, resource_id, response_status, began_at"
                        + " from idemkit_record_history"
                        + " where tenant = ? and operation = ? and idem_key = ? order by id")
                .params(tenant, operation, key)
                .query()
                .listOfRows());
    happyPath(record, history).ifPresent(history::add);
    answer.put("history", history);
    return answer;
  }

  /**
   * The last step of the record's current run when the history table does not hold it: a run that
   * nobody interrupted writes no history (contract §5), so its recovery point or its completion is
   * read from the record's own columns, in the history's shape. A run after a takeover has its rows
   * (the takeover, its {@code FINISH}), and nothing is added.
   */
  private static Optional<Map<String, Object>> happyPath(
      IdempotencyRecord r, List<Map<String, Object>> history) {
    boolean logged =
        history.stream()
            .anyMatch(
                row ->
                    row.get("fencing_token") instanceof Number token
                        && token.longValue() == r.fencingToken());
    boolean finished = r.state().isReplayable();
    if (logged || (!finished && r.recoveryPoint() == null && r.pendingExternal() == null)) {
      return Optional.empty();
    }
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("event", finished ? "FINISH" : "ADVANCE");
    row.put("state", r.state().name());
    row.put("recovery_point", r.recoveryPoint());
    row.put("pending_external", r.pendingExternal());
    row.put("fencing_token", r.fencingToken());
    row.put("at", Timestamp.from(r.updatedAt()));
    row.put("actor", null);
    row.put("reason", null);
    row.put("fingerprint", null);
    row.put("resource_id", r.response() == null ? null : r.response().resourceId());
    row.put("response_status", r.response() == null ? null : r.response().status());
    row.put("began_at", Timestamp.from(r.createdAt()));
    return Optional.of(row);
  }

  /** A name a tenant can have (the rules of {@link Scope}), else 400 and nothing is done. */
  private static String tenant(String tenant) {
    try {
      return Scope.of(tenant, "data_keys").tenant();
    } catch (IllegalArgumentException e) {
      throw Errors.badRequest(
          "INVALID_PATH_PARAMETER",
          "Invalid tenant",
          "No tenant can be named this way: " + e.getMessage() + ".");
    }
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

  private static Map<String, Object> describe(IdempotencyRecord r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("tenant", r.id().tenant());
    m.put("operation", r.id().operation());
    m.put("key", r.id().key().value());
    m.put("state", r.state().name());
    m.put("recoveryPoint", r.recoveryPoint());
    m.put("pendingExternal", r.pendingExternal());
    m.put("recoveryData", r.recoveryData());
    m.put("recoveryAttempts", r.recoveryAttempts());
    m.put("escalatedAt", r.escalatedAt() == null ? null : r.escalatedAt().toString());
    m.put("fencingToken", r.fencingToken());
    m.put("lockedUntil", r.lockedUntil().toString());
    m.put("createdAt", r.createdAt().toString());
    m.put("updatedAt", r.updatedAt().toString());
    m.put("expiresAt", r.expiresAt().toString());
    m.put("responseStatus", r.response() == null ? null : r.response().status());
    return m;
  }
}
