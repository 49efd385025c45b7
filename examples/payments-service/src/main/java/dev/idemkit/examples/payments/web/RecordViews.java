package dev.idemkit.examples.payments.web;

import dev.idemkit.IdempotencyRecord;
import java.sql.Timestamp;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How the admin API shows a record as JSON ({@link AdminAnswers.RecordView}): its columns, the kind
 * of attention a listed record needs, and the last step of its current run when the history table
 * does not hold it. Never a stored body: it may hold personal data.
 */
final class RecordViews {

  private RecordViews() {}

  static Map<String, Object> describe(IdempotencyRecord r) {
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

  static Map<String, Object> listed(IdempotencyRecord r, String attention) {
    Map<String, Object> m = describe(r);
    m.put("attention", attention);
    return m;
  }

  /**
   * The last step of the record's current run when the history table does not hold it: a run that
   * nobody interrupted writes no history (contract §5), so its recovery point or its completion is
   * read from the record's own columns, in the history's shape. A run after a takeover has its rows
   * (the takeover, its {@code FINISH}), and nothing is added.
   */
  static Optional<Map<String, Object>> happyPath(
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
}
