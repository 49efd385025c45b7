package dev.idemkit.examples.payments.web;

import dev.idemkit.DataProtection;
import dev.idemkit.examples.payments.erasure.TenantErasure;
import dev.idemkit.examples.payments.shards.OperatorShards;
import dev.idemkit.spring.boot.IdemkitProperties;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only, see {@link ApiGateFilter}): a tenant's data keys (rotation,
 * crypto-shredding), its erasure, and the re-wrap of a master key's data keys. The data-protection
 * endpoints of the admin API; {@link AdminController} holds its record endpoints. On shards, the
 * work on a tenant runs on that tenant's shard, and a master key's re-wrap on every shard ({@link
 * OperatorShards}).
 *
 * <p>Every endpoint here checks for an operator itself ({@link OperatorEndpoints}), whatever the
 * gate in front decided.
 */
@RestController
public class DataProtectionAdminController extends OperatorEndpoints {

  /** The errorCode of a tenant data-key request naming no tenant of this service. */
  static final String TENANT_NOT_FOUND = "TENANT_NOT_FOUND";

  /** The errorCode of a re-wrap naming no master key, configured or in use. */
  static final String MASTER_KEY_NOT_FOUND = "MASTER_KEY_NOT_FOUND";

  /** The refusals of the endpoints that destroy a tenant's data. */
  @Target(ElementType.METHOD)
  @Retention(RetentionPolicy.RUNTIME)
  @ProblemAnswer(status = 400, errorCodes = "INVALID_PATH_PARAMETER")
  @ProblemAnswer(status = 404, errorCodes = TENANT_NOT_FOUND)
  @ProblemAnswer(status = 409, errorCodes = "TENANT_HAS_UNSETTLED_RECORDS")
  @interface TenantDataProblems {}

  private final JdbcClient jdbc;
  private final DataProtection protection;
  private final ApiKeys apiKeys;
  private final TenantErasure erasure;
  private final OperatorShards shards;

  /** The master keys configured here ({@code idemkit.protection.encryption.master-keys}). */
  private final Set<String> configuredMasterKeys;

  public DataProtectionAdminController(
      JdbcClient jdbc,
      DataProtection protection,
      ApiKeys apiKeys,
      TenantErasure erasure,
      OperatorShards shards,
      IdemkitProperties idemkit) {
    this.erasure = erasure;
    this.shards = shards;
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
  @TenantDataProblems
  @ApiResponse(
      responseCode = "200",
      description = "The tenant and how many data keys were destroyed",
      content =
          @Content(schema = @Schema(implementation = AdminAnswers.TenantDataKeysDestroyed.class)))
  public Map<String, Object> shred(@PathVariable String tenant) throws SQLException {
    String name = tenant(tenant);
    return shards.onTenant(name, () -> shredOnItsShard(name));
  }

  private Map<String, Object> shredOnItsShard(String name) {
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
  @TenantDataProblems
  @ApiResponse(
      responseCode = "200",
      description = "The tenant, the rows erased per table and how many data keys were destroyed",
      content = @Content(schema = @Schema(implementation = AdminAnswers.TenantDataErased.class)))
  public Map<String, Object> erase(@PathVariable String tenant) throws SQLException {
    String name = tenant(tenant);
    return shards.onTenant(name, () -> eraseOnItsShard(name));
  }

  private Map<String, Object> eraseOnItsShard(String name) {
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
  public Map<String, Object> rotate(@PathVariable String tenant) throws SQLException {
    String name = tenant(tenant);
    if (!apiKeys.isTenant(name)) {
      throw Errors.notFound(
          TENANT_NOT_FOUND,
          "No tenant " + name + ": no API key of this service names it. No key was made.");
    }
    return Map.of(
        "tenant", name, "keyId", shards.onTenant(name, () -> protection.rotateTenantKey(name)));
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
  public Map<String, Object> rewrap(@PathVariable String masterKeyId) throws SQLException {
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
                  shards
                      .onEach(
                          () ->
                              jdbc.sql("select distinct master_key_id from idemkit_data_key")
                                  .query(String.class)
                                  .list())
                      .stream()
                      .flatMap(List::stream)
                      .distinct()
                      .sorted()
                      .toList())
              + ".");
    }
    int rewrapped;
    try {
      rewrapped =
          shards.onEach(() -> protection.rewrapDataKeys(masterKeyId)).stream()
              .mapToInt(Integer::intValue)
              .sum();
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

  /** How many data keys master key {@code masterKeyId} wraps, on every shard. */
  private long wrappedBy(String masterKeyId) throws SQLException {
    return shards
        .onEach(
            () ->
                jdbc.sql("select count(*) from idemkit_data_key where master_key_id = ?")
                    .param(masterKeyId)
                    .query(Long.class)
                    .single())
        .stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  /** How many data keys {@code tenant} holds. */
  private long dataKeysOf(String tenant) {
    return jdbc.sql("select count(*) from idemkit_data_key where tenant = ?")
        .param(tenant)
        .query(Long.class)
        .single();
  }
}
