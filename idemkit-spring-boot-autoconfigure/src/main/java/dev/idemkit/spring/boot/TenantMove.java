package dev.idemkit.spring.boot;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyOut;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a tenant from its shard to another, losing no row and keeping every key's answer
 * (docs/scaling.md, "Moving a tenant"). Every step is fenced in the databases, not in time, and is
 * idempotent, so a move interrupted anywhere is finished by calling {@link #move} again with the
 * same target:
 *
 * <ol>
 *   <li>the directory marks the tenant {@code MOVING} to the target: instances that read it answer
 *       the tenant's requests 503 {@code TENANT_MOVING};
 *   <li>{@link TenantFence} fences the tenant on the source, after every transaction that wrote its
 *       rows there ended; later writes there fail (and answer 503 too);
 *   <li>one target transaction lifts the target's fence (the tenant may have lived there before),
 *       deletes what an earlier run of this move copied, and copies every row of the tenant from
 *       one snapshot of the source: Idemkit's tables, then the application's, records with their
 *       states, fencing tokens and stored answers;
 *   <li>the directory names the target, {@code ACTIVE}, version + 1;
 *   <li>the tenant's rows are deleted on every other shard where it is fenced. The fence stays: an
 *       instance that has not read the directory yet still routes to the old shard, and must be
 *       refused there, not answered as if its key were new. A later move back lifts it in step 3.
 * </ol>
 *
 * <p>Two moves of one tenant at once are serialized: the directory row is locked in step 1, and the
 * target's copy takes the tenant's advisory lock.
 */
public final class TenantMove {

  private static final Logger log = LoggerFactory.getLogger(TenantMove.class);

  /** An application table whose rows belong to the tenant named in {@code tenantColumn}. */
  public record Table(String name, String tenantColumn) {
    public Table {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tenantColumn, "tenantColumn");
    }

    private Part part() {
      String table = quoted(name);
      String column = quoted(tenantColumn);
      return new Part(
          table,
          "copy (select * from %s where %s = current_setting('idemkit.moving_tenant')) to stdout"
              .formatted(table, column),
          List.of(),
          "copy %s from stdin".formatted(table),
          List.of(),
          "delete from %s where %s = current_setting('idemkit.moving_tenant')"
              .formatted(table, column));
    }

    /** {@code schema.table} or {@code table}, each part quoted. */
    private static String quoted(String identifier) {
      List<String> parts = new ArrayList<>();
      for (String part : identifier.split("\\.", -1)) {
        if (part.isEmpty()) {
          throw new IllegalArgumentException("Not a table or column name: " + identifier);
        }
        parts.add('"' + part.replace("\"", "\"\"") + '"');
      }
      return String.join(".", parts);
    }
  }

  /**
   * One table's rows of the tenant: how they are read on the source, written on the target (with
   * statements before and after), and deleted.
   */
  private record Part(
      String table,
      String copyOut,
      List<String> beforeCopyIn,
      String copyIn,
      List<String> afterCopyIn,
      String delete) {}

  /**
   * The moving tenant, set for the transaction ({@code current_setting('idemkit.moving_tenant')}),
   * so that the COPY statements, which take no parameter, need no literal.
   */
  private static final String SET_TENANT = "select set_config('idemkit.moving_tenant', ?, true)";

  private static final String TABLE_EXISTS = "select to_regclass(?) is not null";

  /**
   * Idemkit's tenant-bearing tables, in copy order (deleted in the reverse order). An aggregate's
   * rows (its next event number, what each consumer in sequence applied of it) name the tenant of
   * its events, so aggregate ids must belong to one tenant. Quota counts are not moved: they start
   * again on the target.
   */
  private static final List<Part> IDEMKIT =
      List.of(
          new Part(
              "idemkit_data_key",
              """
              copy (select * from idemkit_data_key
                     where tenant = current_setting('idemkit.moving_tenant')) to stdout""",
              List.of(),
              "copy idemkit_data_key from stdin",
              List.of(),
              "delete from idemkit_data_key where tenant = current_setting('idemkit.moving_tenant')"),
          new Part(
              "idemkit_record",
              """
              copy (select * from idemkit_record
                     where tenant = current_setting('idemkit.moving_tenant')) to stdout""",
              List.of(),
              "copy idemkit_record from stdin",
              List.of(),
              "delete from idemkit_record where tenant = current_setting('idemkit.moving_tenant')"),
          // The history's ids are the shard's own: the target gives the rows new ones, in order.
          new Part(
              "idemkit_record_history",
              """
              copy (select tenant, operation, idem_key, event, state, recovery_point,
                           pending_external, fencing_token, at, fingerprint, resource_id,
                           response_status, began_at, actor, reason
                      from idemkit_record_history
                     where tenant = current_setting('idemkit.moving_tenant')
                     order by id) to stdout""",
              List.of(),
              """
              copy idemkit_record_history (tenant, operation, idem_key, event, state,
                   recovery_point, pending_external, fencing_token, at, fingerprint, resource_id,
                   response_status, began_at, actor, reason) from stdin""",
              List.of(),
              """
              delete from idemkit_record_history
               where tenant = current_setting('idemkit.moving_tenant')"""),
          new Part(
              "idemkit_outbox",
              """
              copy (select * from idemkit_outbox
                     where tenant = current_setting('idemkit.moving_tenant')) to stdout""",
              List.of(),
              "copy idemkit_outbox from stdin",
              List.of(),
              "delete from idemkit_outbox where tenant = current_setting('idemkit.moving_tenant')"),
          // The next sequence of each of the tenant's aggregates, its row named after the tenant
          // (or, made before rows named it, found through the tenant's events): the higher one
          // wins on the target.
          new Part(
              "idemkit_outbox_aggregate",
              """
              copy (select a.* from idemkit_outbox_aggregate a
                     where a.tenant = current_setting('idemkit.moving_tenant')
                        or (a.tenant is null
                            and exists (select 1 from idemkit_outbox o
                                         where o.tenant = current_setting('idemkit.moving_tenant')
                                           and o.aggregate_type = a.aggregate_type
                                           and o.aggregate_id = a.aggregate_id))) to stdout""",
              List.of(
                  """
                  create temporary table idemkit_moving_aggregate
                      (like idemkit_outbox_aggregate) on commit drop"""),
              "copy idemkit_moving_aggregate from stdin",
              List.of(
                  """
                  insert into idemkit_outbox_aggregate
                  select * from idemkit_moving_aggregate
                  on conflict (aggregate_type, aggregate_id) do update
                     set last_sequence = greatest(idemkit_outbox_aggregate.last_sequence,
                                                  excluded.last_sequence),
                         tenant = current_setting('idemkit.moving_tenant')"""),
              """
              delete from idemkit_outbox_aggregate a
               where a.tenant = current_setting('idemkit.moving_tenant')
                  or (a.tenant is null
                      and exists (select 1 from idemkit_outbox o
                                   where o.tenant = current_setting('idemkit.moving_tenant')
                                     and o.aggregate_type = a.aggregate_type
                                     and o.aggregate_id = a.aggregate_id))"""),
          new Part(
              "idemkit_inbox",
              """
              copy (select * from idemkit_inbox
                     where tenant = current_setting('idemkit.moving_tenant')) to stdout""",
              List.of(),
              "copy idemkit_inbox from stdin",
              List.of(),
              "delete from idemkit_inbox where tenant = current_setting('idemkit.moving_tenant')"),
          // What each consumer in sequence applied of the tenant's aggregates: the higher one wins
          // on the target.
          new Part(
              "idemkit_inbox_sequence",
              """
              copy (select * from idemkit_inbox_sequence
                     where tenant = current_setting('idemkit.moving_tenant')) to stdout""",
              List.of(
                  """
                  create temporary table idemkit_moving_sequence
                      (like idemkit_inbox_sequence) on commit drop"""),
              "copy idemkit_moving_sequence from stdin",
              List.of(
                  """
                  insert into idemkit_inbox_sequence
                  select * from idemkit_moving_sequence
                  on conflict (consumer_name, aggregate_type, aggregate_id) do update
                     set last_sequence = greatest(idemkit_inbox_sequence.last_sequence,
                                                  excluded.last_sequence),
                         tenant = excluded.tenant"""),
              """
              delete from idemkit_inbox_sequence
               where tenant = current_setting('idemkit.moving_tenant')"""));

  private static final String PIN_HASHED =
      """
      insert into idemkit_tenant_shard (tenant, shard, state, version)
      values (?, ?, 'ACTIVE', 1)
      on conflict (tenant) do nothing
      """;

  private static final String LOCK_ROW =
      "select shard, state, target from idemkit_tenant_shard where tenant = ? for update";

  private static final String BEGIN =
      """
      update idemkit_tenant_shard
         set state = 'MOVING', target = ?, version = version + 1
       where tenant = ? and state = 'ACTIVE'
      """;

  private static final String FINISH =
      """
      update idemkit_tenant_shard
         set shard = target, state = 'ACTIVE', target = null, version = version + 1
       where tenant = ? and state = 'MOVING' and target = ?
      """;

  private final TenantShards shards;
  private final TenantDirectory directory;
  private final List<Part> parts;
  private final List<Part> childrenFirst;

  /** The application's tables, to their tenant columns, for the fence's triggers. */
  private final Map<String, String> fencedTables;

  /**
   * @param applicationTables the application's tenant-bearing tables, parents before children
   *     (copied in this order, deleted in the reverse); the same on every shard
   */
  public TenantMove(TenantShards shards, TenantDirectory directory, List<Table> applicationTables) {
    this.shards = shards;
    this.directory = directory;
    List<Part> all = new ArrayList<>(IDEMKIT);
    applicationTables.forEach(t -> all.add(t.part()));
    this.parts = List.copyOf(all);
    Collections.reverse(all);
    this.childrenFirst = List.copyOf(all);
    this.fencedTables = new LinkedHashMap<>();
    applicationTables.forEach(t -> fencedTables.put(Table.quoted(t.name()), t.tenantColumn()));
  }

  /**
   * Moves {@code tenant} to shard {@code target}, or finishes an interrupted move there; returns
   * once no other shard holds its rows.
   *
   * @throws IllegalStateException if the tenant is moving to another shard: finish that move first
   */
  public void move(String tenant, String target) throws SQLException {
    DataSource to = shards.shard(target);
    for (String shard : shards.names()) {
      TenantFence.install(shards.shard(shard), fencedTables);
    }
    String source = begin(tenant, target);
    if (source != null) {
      DataSource from = shards.shard(source);
      TenantFence.fence(from, tenant);
      long rows = copy(tenant, from, to);
      finish(tenant, target);
      log.info("Tenant {} copied from shard {} to {} ({} rows)", tenant, source, target, rows);
    }
    directory.refresh();
    for (String shard : shards.names()) {
      if (!shard.equals(target)) {
        deleteIfFenced(shards.shard(shard), tenant);
      }
    }
  }

  /** Step 1: answers the source shard, or null if the tenant is on the target already. */
  private String begin(String tenant, String target) throws SQLException {
    try (Connection c = directory.directory().getConnection()) {
      c.setAutoCommit(false);
      try {
        try (PreparedStatement pin = c.prepareStatement(PIN_HASHED)) {
          pin.setString(1, tenant);
          pin.setString(2, directory.hashed(tenant));
          pin.executeUpdate();
        }
        String shard;
        String state;
        String movingTo;
        try (PreparedStatement lock = c.prepareStatement(LOCK_ROW)) {
          lock.setString(1, tenant);
          try (ResultSet row = lock.executeQuery()) {
            row.next();
            shard = row.getString(1);
            state = row.getString(2);
            movingTo = row.getString(3);
          }
        }
        String source;
        if (state.equals("MOVING")) {
          if (!movingTo.equals(target)) {
            throw new IllegalStateException(
                "Tenant "
                    + tenant
                    + " is moving from "
                    + shard
                    + " to "
                    + movingTo
                    + ": finish that move first (move it to "
                    + movingTo
                    + " again), then move it on");
          }
          source = shard;
        } else if (shard.equals(target)) {
          source = null;
        } else {
          try (PreparedStatement begin = c.prepareStatement(BEGIN)) {
            begin.setString(1, target);
            begin.setString(2, tenant);
            begin.executeUpdate();
          }
          source = shard;
        }
        c.commit();
        return source;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /**
   * Step 3: the tenant's rows, from one snapshot of the fenced source, in one target transaction.
   */
  private long copy(String tenant, DataSource from, DataSource to) throws SQLException {
    try (Connection source = from.getConnection();
        Connection target = to.getConnection()) {
      source.setAutoCommit(false);
      source.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      target.setAutoCommit(false);
      try {
        setTenant(source, tenant);
        if (!TenantFence.fenced(source, tenant)) {
          throw new IllegalStateException("Tenant " + tenant + " is not fenced on the source");
        }
        setTenant(target, tenant);
        TenantFence.lock(target, tenant);
        TenantFence.lift(target, tenant);
        delete(target);
        long rows = 0;
        for (Part part : parts) {
          if (exists(source, part.table())) {
            rows += copy(part, source, target);
          }
        }
        target.commit();
        source.commit();
        return rows;
      } catch (SQLException | RuntimeException e) {
        target.rollback();
        source.rollback();
        throw e;
      }
    }
  }

  private static long copy(Part part, Connection source, Connection target) throws SQLException {
    try (Statement s = target.createStatement()) {
      for (String sql : part.beforeCopyIn()) {
        s.execute(sql);
      }
    }
    CopyOut out = source.unwrap(PGConnection.class).getCopyAPI().copyOut(part.copyOut());
    CopyIn in = target.unwrap(PGConnection.class).getCopyAPI().copyIn(part.copyIn());
    try {
      for (byte[] chunk = out.readFromCopy(); chunk != null; chunk = out.readFromCopy()) {
        in.writeToCopy(chunk, 0, chunk.length);
      }
    } catch (SQLException | RuntimeException e) {
      in.cancelCopy();
      throw e;
    }
    long rows = in.endCopy();
    try (Statement s = target.createStatement()) {
      for (String sql : part.afterCopyIn()) {
        s.execute(sql);
      }
    }
    return rows;
  }

  /** Step 4. */
  private void finish(String tenant, String target) throws SQLException {
    try (Connection c = directory.directory().getConnection();
        PreparedStatement finish = c.prepareStatement(FINISH)) {
      finish.setString(1, tenant);
      finish.setString(2, target);
      finish.executeUpdate();
    }
  }

  /** Step 5 on one shard: its rows of the tenant, if the tenant is fenced there. */
  private void deleteIfFenced(DataSource shard, String tenant) throws SQLException {
    try (Connection c = shard.getConnection()) {
      c.setAutoCommit(false);
      try {
        setTenant(c, tenant);
        if (exists(c, "idemkit_tenant_fence") && TenantFence.fenced(c, tenant)) {
          delete(c);
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /** Deletes the tenant's rows, children first, in the transaction's tenant. */
  private void delete(Connection c) throws SQLException {
    for (Part part : childrenFirst) {
      if (exists(c, part.table())) {
        try (Statement s = c.createStatement()) {
          s.executeUpdate(part.delete());
        }
      }
    }
  }

  private static void setTenant(Connection c, String tenant) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(SET_TENANT)) {
      p.setString(1, tenant);
      p.execute();
    }
  }

  private static boolean exists(Connection c, String table) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(TABLE_EXISTS)) {
      p.setString(1, table);
      try (ResultSet row = p.executeQuery()) {
        row.next();
        return row.getBoolean(1);
      }
    }
  }
}
