package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.spi.CleanupResult;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The record table's layouts (docs/scaling.md, "Records at large scale"): what the database holds
 * for each, and which conversions {@link IdemkitSchema} makes and refuses.
 */
class RecordLayoutIT {

  /** Expired records, every one past its metadata retention of an hour. */
  private static final String EXPIRED_RECORDS =
      """
      insert into idemkit_record (tenant, operation, idem_key, fingerprint, state, fencing_token,
          locked_until, response_status, response_body, created_at, updated_at, expires_at)
      select 'tenant-' || (g %% 7), 'create_payment', 'key-' || g, 'v1:sha256:x', 'COMPLETED', 1,
          now() - interval '2 days', 201, '{"id":1}'::bytea, now() - interval '2 days',
          now() - interval '2 days', now() - interval '1 day'
      from generate_series(1, %d) g
      """;

  @Test
  void aNewHashPartitionedTableHasItsPartitionsAndThePlainTablesIndexesAndCleanupEmptiesThemAll()
      throws Exception {
    try (IdemkitDatabase plain = TestDatabase.freshSchema(2);
        IdemkitDatabase hashed = TestDatabase.freshSchema(2, RecordLayout.hashPartitioned(16))) {
      DataSource ds = hashed.dataSource();
      assertThat(IdemkitSchema.layout(ds)).isEqualTo(RecordLayout.hashPartitioned(16));
      assertThat(
              query(
                  ds,
                  "select p.partstrat || ':' || p.partnatts from pg_partitioned_table p"
                      + " where p.partrelid = 'idemkit_record'::regclass"))
          .containsExactly("h:3");
      assertThat(
              query(
                  ds,
                  "select pg_get_expr(c.relpartbound, c.oid) from pg_inherits i"
                      + " join pg_class c on c.oid = i.inhrelid"
                      + " where i.inhparent = 'idemkit_record'::regclass order by c.relname"))
          .hasSize(16)
          .first()
          .isEqualTo("FOR VALUES WITH (modulus 16, remainder 0)");
      // Every index of the plain table, by the same name and definition, on the partitioned one
      // and on each partition; the partitions keep the plain table's storage settings.
      String indexes =
          "select indexname || ' ' || regexp_replace(indexdef, '^.* USING ', '')"
              + " from pg_indexes where schemaname = current_schema() and tablename = 'idemkit_record'"
              + " order by indexname";
      assertThat(query(ds, indexes)).isEqualTo(query(plain.dataSource(), indexes)).hasSize(6);
      assertThat(
              query(
                  ds,
                  "select count(*) from pg_indexes where schemaname = current_schema()"
                      + " and tablename = 'idemkit_record_p07'"))
          .containsExactly("6");
      assertThat(
              query(
                  ds,
                  "select array_to_string(reloptions, ',') from pg_class"
                      + " where oid = 'idemkit_record_p07'::regclass"))
          .isEqualTo(
              query(
                  plain.dataSource(),
                  "select array_to_string(reloptions, ',') from pg_class"
                      + " where oid = 'idemkit_record'::regclass"));

      TestDatabase.execute(ds, EXPIRED_RECORDS.formatted(3200));
      Map<String, Integer> rows = rowsPerPartition(ds);
      assertThat(rows).hasSize(16);
      assertThat(rows.values()).allSatisfy(n -> assertThat(n).isBetween(100, 300));

      PostgresIdempotencyStore store =
          PostgresIdempotencyStore.builder(JdbcTransactions.of(ds)).build();
      CleanupResult cleaned = store.cleanup(Duration.ofHours(1), 150);

      assertThat(cleaned.bodiesDropped()).isEqualTo(3200);
      assertThat(cleaned.recordsDeleted()).isEqualTo(3200);
      assertThat(query(ds, "select count(*) from idemkit_record")).containsExactly("0");
    }
  }

  @Test
  void aTableKeepsItsLayoutAndATableWithRowsIsNotConverted() throws Exception {
    try (IdemkitDatabase db = TestDatabase.freshSchema(2)) {
      DataSource ds = db.dataSource();
      TestDatabase.execute(ds, EXPIRED_RECORDS.formatted(1));

      assertThatThrownBy(() -> IdemkitSchema.migrate(ds, RecordLayout.hashPartitioned(4)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("idemkit_record is plain in this database")
          .hasMessageContaining("docs/scaling.md");
      assertThat(IdemkitSchema.layout(ds)).isEqualTo(RecordLayout.plain());
      assertThat(query(ds, "select idem_key from idemkit_record")).containsExactly("key-1");

      TestDatabase.execute(ds, "delete from idemkit_record");
      assertThat(IdemkitSchema.migrate(ds, RecordLayout.hashPartitioned(4))).isZero();
      assertThat(IdemkitSchema.layout(ds)).isEqualTo(RecordLayout.hashPartitioned(4));
      // Again: nothing to do. Another count, or the plain layout, is refused.
      assertThat(IdemkitSchema.migrate(ds, RecordLayout.hashPartitioned(4))).isZero();
      assertThatThrownBy(() -> IdemkitSchema.migrate(ds, RecordLayout.hashPartitioned(8)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("hash-partitioned (4 partitions) in this database");
      assertThatThrownBy(() -> IdemkitSchema.requireCurrent(ds, RecordLayout.plain()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not plain as configured");
      IdemkitSchema.requireCurrent(ds, RecordLayout.hashPartitioned(4));
    }
  }

  private static Map<String, Integer> rowsPerPartition(DataSource ds) throws Exception {
    Map<String, Integer> rows = new TreeMap<>();
    for (String row :
        query(
            ds,
            "select tableoid::regclass || ' ' || count(*) from idemkit_record group by tableoid")) {
      String[] parts = row.split(" ");
      rows.put(parts[0], Integer.parseInt(parts[1]));
    }
    return rows;
  }

  private static List<String> query(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getString(1));
      }
      return rows;
    }
  }
}
