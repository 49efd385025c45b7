package dev.idemkit.spring.boot;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The fence that keeps a tenant's rows on a shard still while the tenant moves off it: a row in
 * {@code idemkit_tenant_fence}, checked by a {@code BEFORE INSERT OR UPDATE} trigger on each of
 * Idemkit's tenant-bearing tables and on the application's tables a {@link TenantMove} names (by
 * their tenant column, so that a business write outside an idempotent request is fenced too).
 * Installed on shard databases only; a single-database deployment has neither the table nor the
 * triggers.
 *
 * <p><b>Why nothing slips past.</b> Each trigger takes {@code pg_advisory_xact_lock_shared} on the
 * tenant before it reads the fence table; {@link #fence} takes the same lock exclusively while it
 * inserts the fence row. So the fence commits only after every transaction that had written the
 * tenant's rows ended, and a transaction that writes one after it waits for the fence's commit
 * (PostgreSQL queues a shared request behind a waiting exclusive one), then reads it (a new
 * snapshot per statement at READ COMMITTED, Idemkit's level) and fails with SQLState {@value
 * #SQL_STATE}. The record write shares the request's transaction, so the request's business rows go
 * down with it.
 */
public final class TenantFence {

  /** The SQLState a fenced write fails with. */
  public static final String SQL_STATE = "IKT01";

  /**
   * Idempotent, and serialized by a transaction-level advisory lock so that instances starting
   * together do not replace the function under each other. The record, its data keys: every write;
   * history, outbox, inbox: new rows (a relay marking an event sent on the old shard is not fenced:
   * the copy is unsent and is sent again, as the outbox promises at least once).
   */
  private static final String INSTALL =
      """
      select pg_advisory_xact_lock(7347, 0);
      create table if not exists idemkit_tenant_fence (
          tenant    text        collate "C" primary key,
          fenced_at timestamptz not null default now()
      );
      create or replace function idemkit_tenant_fence_check() returns trigger
      language plpgsql as $$
      begin
          if new.tenant is not null then
              perform pg_advisory_xact_lock_shared(7347, hashtext(new.tenant));
              if exists (select 1 from idemkit_tenant_fence f where f.tenant = new.tenant) then
                  raise exception 'tenant % is fenced on this shard: it is moving or moved away',
                      new.tenant using errcode = 'IKT01';
              end if;
          end if;
          return new;
      end $$;
      create or replace function idemkit_tenant_fence_check_by() returns trigger
      language plpgsql as $$
      declare
          v_tenant text := to_jsonb(new) ->> tg_argv[0];
      begin
          if v_tenant is not null then
              perform pg_advisory_xact_lock_shared(7347, hashtext(v_tenant));
              if exists (select 1 from idemkit_tenant_fence f where f.tenant = v_tenant) then
                  raise exception 'tenant % is fenced on this shard: it is moving or moved away',
                      v_tenant using errcode = 'IKT01';
              end if;
          end if;
          return new;
      end $$;
      create or replace function idemkit_tenant_fence_guard(p_table regclass, p_column text)
      returns void language plpgsql as $$
      begin
          if not exists (select 1 from pg_trigger
                          where tgrelid = p_table and tgname = 'idemkit_tenant_fence') then
              execute format('create trigger idemkit_tenant_fence before insert or update on %s'
                             ' for each row execute function idemkit_tenant_fence_check_by(%L)',
                             p_table, p_column);
          end if;
      end $$;
      do $$
      declare
          t text;
          events text;
      begin
          foreach t in array array['idemkit_record', 'idemkit_data_key',
                                   'idemkit_record_history', 'idemkit_outbox', 'idemkit_inbox'] loop
              events := case when t in ('idemkit_record', 'idemkit_data_key')
                             then 'insert or update' else 'insert' end;
              if to_regclass(t) is not null and not exists (
                  select 1 from pg_trigger
                   where tgrelid = to_regclass(t) and tgname = 'idemkit_tenant_fence') then
                  execute format('create trigger idemkit_tenant_fence before %s on %I'
                                 ' for each row execute function idemkit_tenant_fence_check()',
                                 events, t);
              end if;
          end loop;
      end $$;
      """;

  /** The application's table (its name as {@code to_regclass} reads it) and tenant column. */
  private static final String GUARD =
      "select idemkit_tenant_fence_guard(to_regclass(?), ?) where to_regclass(?) is not null";

  private static final String LOCK_TENANT = "select pg_advisory_xact_lock(7347, hashtext(?))";

  private static final String FENCE =
      "insert into idemkit_tenant_fence (tenant) values (?) on conflict (tenant) do nothing";

  /** Lifted inside the copy's transaction on the target, which the tenant may have left before. */
  private static final String LIFT = "delete from idemkit_tenant_fence where tenant = ?";

  private static final String FENCED = "select 1 from idemkit_tenant_fence where tenant = ?";

  private TenantFence() {}

  /** Creates the fence table, functions and triggers on the tables that exist; idempotent. */
  public static void install(DataSource shard) throws SQLException {
    install(shard, Map.of());
  }

  /**
   * {@link #install(DataSource)}, and the same trigger on the application's tables that exist, each
   * reading the tenant from its column (a name as {@code to_regclass} reads it, to its column).
   */
  static void install(DataSource shard, Map<String, String> applicationTables) throws SQLException {
    try (Connection c = shard.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement();
          PreparedStatement guard = c.prepareStatement(GUARD)) {
        s.execute(INSTALL);
        for (Map.Entry<String, String> table : applicationTables.entrySet()) {
          guard.setString(1, table.getKey());
          guard.setString(2, table.getValue());
          guard.setString(3, table.getKey());
          guard.execute();
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /**
   * Fences {@code tenant} on {@code shard}; returns once every transaction that wrote its rows
   * there has ended. Idempotent.
   */
  static void fence(DataSource shard, String tenant) throws SQLException {
    try (Connection c = shard.getConnection()) {
      c.setAutoCommit(false);
      try {
        lock(c, tenant);
        update(c, FENCE, tenant);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /** Lifts the fence in {@code transaction} (after {@link #lock}). */
  static void lift(Connection transaction, String tenant) throws SQLException {
    update(transaction, LIFT, tenant);
  }

  /**
   * Waits for the tenant's writers on this connection's database and keeps them out until commit.
   */
  static void lock(Connection transaction, String tenant) throws SQLException {
    try (PreparedStatement p = transaction.prepareStatement(LOCK_TENANT)) {
      p.setString(1, tenant);
      p.execute();
    }
  }

  static boolean fenced(Connection c, String tenant) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(FENCED)) {
      p.setString(1, tenant);
      try (var rows = p.executeQuery()) {
        return rows.next();
      }
    }
  }

  /** Whether {@code failure}, or any of its causes, is a write the fence refused. */
  public static boolean isCauseOf(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException e && SQL_STATE.equals(e.getSQLState())) {
        return true;
      }
    }
    return false;
  }

  private static void update(Connection c, String sql, String tenant) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(sql)) {
      p.setString(1, tenant);
      p.executeUpdate();
    }
  }
}
