package dev.idemkit.examples.payments.web;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.Map;

/**
 * The shapes of the operator endpoints' answers, for the OpenAPI document only: {@link
 * AdminController}, {@link RecordViews} and {@link DataProtectionAdminController} build them as
 * maps (the history rows straight from {@code idemkit_record_history}, in its column names, and,
 * for a run nobody interrupted, which writes no history, its last step read from the record in the
 * same shape), and {@code DocumentedAnswersIT} checks that the answers it gets fit these.
 */
public final class AdminAnswers {

  private AdminAnswers() {}

  /**
   * The scope and key that name a record, inline in each view of it like {@link RecordProgress}.
   */
  @Schema(
      name = "IdempotencyRecordKey",
      requiredProperties = {"tenant", "operation", "key"})
  public record RecordKey(String tenant, String operation, String key) {}

  /**
   * Where a record's operation stands, as every view of the record shows it: its fields stand
   * inline in each view ({@code @JsonUnwrapped}), as {@link RecordViews} writes them.
   */
  @Schema(
      name = "IdempotencyRecordProgress",
      requiredProperties = {
        "recoveryPoint",
        "pendingExternal",
        "recoveryData",
        "recoveryAttempts",
        "escalatedAt",
        "fencingToken",
        "lockedUntil",
        "createdAt",
        "updatedAt",
        "expiresAt",
        "responseStatus"
      })
  public record RecordProgress(
      @Schema(types = {"string", "null"}) String recoveryPoint,
      @Schema(types = {"string", "null"}) String pendingExternal,
      @Schema(
              types = {"object", "null"},
              description = "The recovery data, sealed when data protection is on")
          Map<String, Object> recoveryData,
      int recoveryAttempts,
      @Schema(
              types = {"string", "null"},
              format = "date-time",
              description = "When automatic recovery gave up and asked an operator")
          String escalatedAt,
      long fencingToken,
      @Schema(format = "date-time") String lockedUntil,
      @Schema(format = "date-time") String createdAt,
      @Schema(format = "date-time") String updatedAt,
      @Schema(format = "date-time") String expiresAt,
      @Schema(types = {"integer", "null"}) Integer responseStatus) {}

  /** A record as operators see it. */
  @Schema(
      name = "IdempotencyRecord",
      requiredProperties = {"state", "attention"})
  public record RecordSummary(
      @JsonUnwrapped RecordKey id,
      @Schema(
              allowableValues = {
                "IN_PROGRESS",
                "COMPLETED",
                "FAILED_REPLAYABLE",
                "FAILED_RETRYABLE",
                "UNKNOWN_REQUIRES_RECOVERY"
              })
          String state,
      @JsonUnwrapped RecordProgress progress,
      @Schema(
              allowableValues = {"DUE", "WAITING_FOR_NEXT_ATTEMPT", "AWAITING_OPERATOR"},
              description =
                  "DUE: recovery runs now; WAITING_FOR_NEXT_ATTEMPT: the unknown outcome waits"
                      + " out its back-off; AWAITING_OPERATOR: escalated, resolve it")
          String attention,
      @Schema(
              format = "date-time",
              description = "In waiting only: when the next automatic attempt is due")
          String nextAttemptAt) {}

  /** A record with its history, oldest first. */
  @Schema(
      name = "IdempotencyRecordWithHistory",
      requiredProperties = {"state", "history"})
  public record RecordView(
      @JsonUnwrapped RecordKey id,
      String state,
      @JsonUnwrapped RecordProgress progress,
      List<HistoryRow> history) {}

  /** One event of a record's history, in the history table's column names. */
  @Schema(
      name = "IdempotencyRecordEvent",
      requiredProperties = {
        "event",
        "state",
        "recovery_point",
        "pending_external",
        "fencing_token",
        "at",
        "actor",
        "reason",
        "fingerprint",
        "resource_id",
        "response_status",
        "began_at"
      })
  public record HistoryRow(
      String event,
      String state,
      @Schema(types = {"string", "null"}) String recovery_point,
      @Schema(types = {"string", "null"}) String pending_external,
      long fencing_token,
      @Schema(format = "date-time") String at,
      @Schema(
              types = {"string", "null"},
              description = "The operator who resolved it")
          String actor,
      @Schema(
              types = {"string", "null"},
              description = "The operator's reason")
          String reason,
      @Schema(types = {"string", "null"}) String fingerprint,
      @Schema(types = {"string", "null"}) String resource_id,
      @Schema(types = {"integer", "null"}) Integer response_status,
      @Schema(
              types = {"string", "null"},
              format = "date-time")
          String began_at) {}

  /**
   * The records due for recovery, those waiting for their next automatic attempt, and those
   * escalated to an operator.
   */
  @Schema(
      name = "RecoveryRecords",
      requiredProperties = {
        "records",
        "count",
        "waiting",
        "waitingCount",
        "escalated",
        "escalatedCount"
      })
  public record RecoveryRecords(
      List<RecordSummary> records,
      int count,
      List<RecordSummary> waiting,
      int waitingCount,
      List<RecordSummary> escalated,
      int escalatedCount) {}

  /** A tenant's new data key. */
  @Schema(
      name = "TenantDataKey",
      requiredProperties = {"tenant", "keyId"})
  public record TenantDataKey(String tenant, String keyId) {}

  /** A tenant's data keys, destroyed. */
  @Schema(
      name = "TenantDataKeysDestroyed",
      requiredProperties = {"tenant", "destroyedKeys"})
  public record TenantDataKeysDestroyed(String tenant, int destroyedKeys) {}

  /** A tenant's erasure. */
  @Schema(
      name = "TenantDataErased",
      requiredProperties = {"tenant", "erasedRows", "destroyedKeys"})
  public record TenantDataErased(
      String tenant,
      @Schema(description = "Rows deleted, per table") Map<String, Integer> erasedRows,
      int destroyedKeys) {}
}
