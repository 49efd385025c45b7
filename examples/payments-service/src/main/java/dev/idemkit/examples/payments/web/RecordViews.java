package dev.idemkit.examples.payments.web;

import dev.idemkit.IdempotencyRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * How the admin API shows a record as JSON ({@link AdminAnswers.RecordView}): its columns, the kind
 * of attention a listed record needs, and its history, with the last step of its current run when
 * the history table does not hold it. Every field is named in camelCase, as in the rest of the API;
 * times are ISO-8601 instants. Never a stored body: it may hold personal data.
 */
final class RecordViews {

  private static final String HISTORY =
      """
      select event, state, recovery_point, pending_external, fencing_token, at, actor, reason,
             fingerprint, resource_id, response_status, began_at
        from idemkit_record_history
       where tenant = ? and operation = ? and idem_key = ?
       order by id
      """;

  private RecordViews() {}

  /**
   * The record's columns. The columns of a run in flight ({@code recoveryPoint}, {@code
   * pendingExternal}, {@code recoveryData}, the lease {@code lockedUntil}) are shown only while the
   * record is live ({@code IN_PROGRESS}, {@code UNKNOWN_REQUIRES_RECOVERY}): once it has finished
   * they are left over from the run and nothing reads them again, so they are omitted. Where the
   * run got to stays in its history (the {@code FINISH} or {@code SUSPEND} step).
   */
  static Map<String, Object> describe(IdempotencyRecord r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("tenant", r.id().tenant());
    m.put("operation", r.id().operation());
    m.put("key", r.id().key().value());
    m.put("state", r.state().name());
    if (r.state().isLive()) {
      m.put("recoveryPoint", r.recoveryPoint());
      m.put("pendingExternal", r.pendingExternal());
      m.put("recoveryData", r.recoveryData());
      m.put("lockedUntil", r.lockedUntil().toString());
    }
    m.put("recoveryAttempts", r.recoveryAttempts());
    m.put("escalatedAt", r.escalatedAt() == null ? null : r.escalatedAt().toString());
    m.put("fencingToken", r.fencingToken());
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
   * The record's history, oldest first ({@link AdminAnswers.HistoryRow}), ending with the last step
   * of its current run when the history table does not hold it: a run that nobody interrupted
   * writes no history (contract §5), so its recovery point or its completion is read from the
   * record's own columns, in the history's shape. A run after a takeover has its rows (the
   * takeover, its {@code FINISH}), and nothing is added.
   */
  static List<Map<String, Object>> history(JdbcClient jdbc, IdempotencyRecord r) {
    List<Map<String, Object>> history =
        new ArrayList<>(
            jdbc.sql(HISTORY)
                .params(r.id().tenant(), r.id().operation(), r.id().key().value())
                .query(RecordViews::historyRow)
                .list());
    boolean logged =
        history.stream().anyMatch(row -> row.get("fencingToken").equals(r.fencingToken()));
    boolean finished = r.state().isReplayable();
    if (logged || (!finished && r.recoveryPoint() == null && r.pendingExternal() == null)) {
      return history;
    }
    history.add(
        historyRow(
            finished ? "FINISH" : "ADVANCE",
            r.state().name(),
            r.recoveryPoint(),
            r.pendingExternal(),
            r.fencingToken(),
            r.updatedAt(),
            null,
            null,
            null,
            r.response() == null ? null : r.response().resourceId(),
            r.response() == null ? null : r.response().status(),
            r.createdAt()));
    return history;
  }

  private static Map<String, Object> historyRow(ResultSet rs, int rowNum) throws SQLException {
    return historyRow(
        rs.getString("event"),
        rs.getString("state"),
        rs.getString("recovery_point"),
        rs.getString("pending_external"),
        rs.getLong("fencing_token"),
        instant(rs.getTimestamp("at")),
        rs.getString("actor"),
        rs.getString("reason"),
        rs.getString("fingerprint"),
        rs.getString("resource_id"),
        rs.getObject("response_status", Integer.class),
        instant(rs.getTimestamp("began_at")));
  }

  private static Map<String, Object> historyRow(
      String event,
      String state,
      String recoveryPoint,
      String pendingExternal,
      long fencingToken,
      Instant at,
      String actor,
      String reason,
      String fingerprint,
      String resourceId,
      Integer responseStatus,
      Instant beganAt) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("event", event);
    row.put("state", state);
    row.put("recoveryPoint", recoveryPoint);
    row.put("pendingExternal", pendingExternal);
    row.put("fencingToken", fencingToken);
    row.put("at", at.toString());
    row.put("actor", actor);
    row.put("reason", reason);
    row.put("fingerprint", fingerprint);
    row.put("resourceId", resourceId);
    row.put("responseStatus", responseStatus);
    row.put("beganAt", beganAt == null ? null : beganAt.toString());
    return row;
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
