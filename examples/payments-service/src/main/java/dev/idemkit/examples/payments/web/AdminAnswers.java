package dev.idemkit.examples.payments.web;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.Map;

/**
 * The shapes of the operator endpoints' answers, for the OpenAPI document only: {@link
 * AdminController}, {@link RecordViews} and {@link DataProtectionAdminController} build them as
 * maps (the history rows from {@code idemkit_record_history} and, for a run nobody interrupted,
 * which writes no history, its last step read from the record in the same shape), every field in
 * camelCase, and {@code DocumentedAnswersIT} checks that the answers it gets fit these.
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
   * inline in each view ({@code @JsonUnwrapped}), as {@link RecordViews} writes them. The fields of
   * a run in flight are omitted once the record has finished (any state but {@code IN_PROGRESS} and
   * {@code UNKNOWN_REQUIRES_RECOVERY}): they are left over from the run, and its history keeps
   * where it got to.
   */
  @Schema(
      name = "IdempotencyRecordProgress",
      requiredProperties = {
        "recoveryAttempts",
        "escalatedAt",
        "fencingToken",
        "createdAt",
        "updatedAt",
        "expiresAt",
        "responseStatus"
      })
  public record RecordProgress(
      @Schema(
              types = {"string", "null"},
              description =
                  "The last step whose effects are durable; omitted once the record has finished")
          String recoveryPoint,
      @Schema(
              types = {"string", "null"},
              description =
                  "The external call started and not yet recorded; omitted once the record has"
                      + " finished")
          String pendingExternal,
      @Schema(
              types = {"object", "null"},
              description =
                  "The recovery data, sealed when data protection is on; omitted once the record"
                      + " has finished")
          Map<String, Object> recoveryData,
      int recoveryAttempts,
      @Schema(
              types = {"string", "null"},
              format = "date-time",
              description = "When automatic recovery gave up and asked an operator")
          String escalatedAt,
      @Schema(description = "Bumped on every change of owner; a history row names its run by it")
          long fencingToken,
      @Schema(
              format = "date-time",
              description = "The owner's lease; omitted once the record has finished")
          String lockedUntil,
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

  /** One event of a record's history. */
  @Schema(
      name = "IdempotencyRecordEvent",
      requiredProperties = {
        "event",
        "state",
        "recoveryPoint",
        "pendingExternal",
        "fencingToken",
        "at",
        "actor",
        "reason",
        "fingerprint",
        "resourceId",
        "responseStatus",
        "beganAt"
      })
  public record HistoryRow(
      String event,
      String state,
      @Schema(
              types = {"string", "null"},
              description = "The last step whose effects were durable at this event")
          String recoveryPoint,
      @Schema(types = {"string", "null"}) String pendingExternal,
      long fencingToken,
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
      @Schema(types = {"string", "null"}) String resourceId,
      @Schema(types = {"integer", "null"}) Integer responseStatus,
      @Schema(
              types = {"string", "null"},
              format = "date-time")
          String beganAt) {}

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

  /** A tenant moved to another shard: the shard it was on, and the one it is on now. */
  @Schema(
      name = "TenantMoved",
      requiredProperties = {"tenant", "from", "shard"})
  public record TenantMoved(String tenant, String from, String shard) {}

  /** A tenant's erasure. */
  @Schema(
      name = "TenantDataErased",
      requiredProperties = {"tenant", "erasedRows", "destroyedKeys"})
  public record TenantDataErased(
      String tenant,
      @Schema(description = "Rows deleted, per table") Map<String, Integer> erasedRows,
      int destroyedKeys) {}
}
