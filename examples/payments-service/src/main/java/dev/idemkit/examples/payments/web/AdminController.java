package dev.idemkit.examples.payments.web;

import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.Scope;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.IdempotencyStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * For operators (admin API keys only, see {@link ApiGateFilter}): the records that need recovery,
 * and one scope's record with the history of its phases. Never a stored body: it may hold personal
 * data.
 */
@RestController
public class AdminController {

  private final IdempotencyStore store;
  private final JdbcClient jdbc;

  public AdminController(IdempotencyStore store, JdbcClient jdbc) {
    this.store = store;
    this.jdbc = jdbc;
  }

  @GetMapping("/v1/admin/idempotency/recovery")
  public Map<String, Object> needingRecovery(@RequestParam(defaultValue = "100") int limit) {
    List<Map<String, Object>> records =
        store.findNeedingRecovery(Math.min(Math.max(limit, 1), 1000)).stream()
            .map(AdminController::describe)
            .toList();
    return Map.of("records", records, "count", records.size());
  }

  @GetMapping("/v1/admin/idempotency/records/{tenant}/{operation}/{key}")
  public Map<String, Object> record(
      @PathVariable String tenant, @PathVariable String operation, @PathVariable String key) {
    ScopedKey id = new ScopedKey(Scope.of(tenant, operation), IdempotencyKey.of(key));
    IdempotencyRecord record =
        store
            .find(id)
            .orElseThrow(() -> Errors.notFound("RECORD_NOT_FOUND", "No record for " + id + "."));
    Map<String, Object> answer = describe(record);
    answer.put(
        "history",
        jdbc.sql(
                "select event, state, recovery_point, pending_external, fencing_token, at"
                    + " from idemkit_record_history"
                    + " where tenant = ? and operation = ? and idem_key = ? order by id")
            .params(tenant, operation, key)
            .query()
            .listOfRows());
    return answer;
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
    m.put("fencingToken", r.fencingToken());
    m.put("lockedUntil", r.lockedUntil().toString());
    m.put("createdAt", r.createdAt().toString());
    m.put("updatedAt", r.updatedAt().toString());
    m.put("expiresAt", r.expiresAt().toString());
    m.put("responseStatus", r.response() == null ? null : r.response().status());
    return m;
  }
}
