package dev.idemkit.jdbc;

import dev.idemkit.spi.QuotaSync;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;

/**
 * The instances' quota counts shared through PostgreSQL (schema V17), for {@link
 * PostgresIdempotencyStore#capability}: one exchange is one transaction of three statements, run by
 * a background worker about once a second, never on a request's path.
 *
 * <p>Each instance writes only its own rows ({@link #WRITE_OWN}: a tenant's new keys of a minute,
 * as a total), so exchanges of different instances never wait for each other's locks; the others'
 * rows are summed by {@link #READ_OTHERS}, and the live records counted by {@link #COUNT_LIVE}.
 */
final class PostgresQuotaSync implements QuotaSync {

  /**
   * This instance's new keys per tenant in a minute, as totals: a row is this instance's alone, and
   * only grows within its minute ({@code greatest}: an exchange that reached the database late
   * never lowers a later one's total).
   */
  private static final String WRITE_OWN =
      """
      with clock as (select coalesce(cast(? as timestamptz), statement_timestamp()) as now)
      insert into idemkit_quota_new_keys as q (tenant, minute, instance, keys, updated_at)
      select t.tenant, ?, ?, t.keys, clock.now
      from unnest(cast(? as text[]), cast(? as integer[])) as t(tenant, keys), clock
      on conflict (minute, tenant, instance) do update
        set keys = greatest(q.keys, excluded.keys), updated_at = excluded.updated_at
      """;

  /** The other instances' new keys per tenant in the minute. */
  private static final String READ_OTHERS =
      """
      select q.tenant, sum(q.keys) as keys
      from idemkit_quota_new_keys q
      where q.minute = ? and q.instance <> ?
      group by q.tenant
      """;

  /**
   * Live records per tenant: due for recovery, or escalated to an operator and not yet resolved.
   * The outer condition is the predicate of V11's {@code idemkit_record_live_tenant_ix}, so the
   * count reads that small index; the filters are the quota's condition.
   */
  private static final String COUNT_LIVE =
      """
      with clock as (select coalesce(cast(? as timestamptz), statement_timestamp()) as now)
      select r.tenant,
          count(*) filter (where r.recovery_due is not null
              or (r.escalated_at is not null and r.state = 'UNKNOWN_REQUIRES_RECOVERY')) as live,
          count(*) filter (where r.escalated_at is not null
              and r.state = 'UNKNOWN_REQUIRES_RECOVERY') as escalated,
          min(clock.now) as now
      from idemkit_record r, clock
      where r.recovery_due is not null or r.escalated_at is not null
      group by r.tenant
      union all -- the store's time, on a row of its own: there may be no live record
      select null, 0, 0, clock.now from clock
      """;

  private final JdbcTransactions transactions;
  private final Clock clock;

  PostgresQuotaSync(JdbcTransactions transactions, Clock clock) {
    this.transactions = transactions;
    this.clock = clock;
  }

  @Override
  public SharedQuotaCounts exchange(String instance, Instant minute, Map<String, Integer> newKeys) {
    try {
      return transactions.inTransaction(c -> exchange(c, instance, minute, newKeys));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IdempotencyStoreException("Could not exchange the quota counts", e);
    }
  }

  private SharedQuotaCounts exchange(
      Connection c, String instance, Instant minute, Map<String, Integer> newKeys)
      throws SQLException {
    OffsetDateTime at = minute.atOffset(ZoneOffset.UTC);
    if (!newKeys.isEmpty()) {
      String[] tenants = newKeys.keySet().toArray(String[]::new);
      Integer[] keys = new Integer[tenants.length];
      for (int i = 0; i < tenants.length; i++) {
        keys[i] = newKeys.get(tenants[i]);
      }
      Array tenantArray = c.createArrayOf("text", tenants);
      Array keyArray = c.createArrayOf("integer", keys);
      try (PreparedStatement ps = c.prepareStatement(WRITE_OWN)) {
        bindNow(ps);
        ps.setObject(2, at);
        ps.setString(3, instance);
        ps.setArray(4, tenantArray);
        ps.setArray(5, keyArray);
        ps.executeUpdate();
      } finally {
        tenantArray.free();
        keyArray.free();
      }
    }
    Map<String, Integer> others = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(READ_OTHERS)) {
      ps.setObject(1, at);
      ps.setString(2, instance);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          others.put(rs.getString(1), (int) Math.min(Integer.MAX_VALUE, rs.getLong(2)));
        }
      }
    }
    Map<String, LiveRecords> live = new HashMap<>();
    Instant now = null;
    try (PreparedStatement ps = c.prepareStatement(COUNT_LIVE)) {
      bindNow(ps);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String tenant = rs.getString(1);
          if (tenant == null) {
            now = rs.getObject(4, OffsetDateTime.class).toInstant();
          } else {
            live.put(tenant, new LiveRecords(rs.getInt(2), rs.getInt(3)));
          }
        }
      }
    }
    return new SharedQuotaCounts(now, others, live);
  }

  /** The clock parameter, as {@link PostgresIdempotencyStore} binds it: text, or a typed NULL. */
  private void bindNow(PreparedStatement ps) throws SQLException {
    if (clock == null) {
      ps.setNull(1, Types.VARCHAR);
    } else {
      ps.setString(1, clock.instant().toString());
    }
  }
}
