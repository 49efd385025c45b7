package dev.idemkit.bench;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.RecordLayout;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A record table of many realistic rows for the benchmarks, written by the database itself ({@code
 * generate_series}, 100 000 rows a statement), not through the store; and the table's layout and
 * sizes.
 */
final class RecordLoad {

  private RecordLoad() {}

  /** The layout {@code --layout plain|hash-partitioned} and {@code --partitions N} ask for. */
  static RecordLayout layout(String[] args) {
    String layout = BenchArgs.stringArg(args, "--layout", "plain");
    return switch (layout) {
      case "plain" -> RecordLayout.plain();
      case "hash-partitioned" ->
          RecordLayout.hashPartitioned(BenchArgs.intArg(args, "--partitions", 16));
      default -> throw new IllegalArgumentException("--layout plain|hash-partitioned: " + layout);
    };
  }

  /**
   * A schema of its own on {@code base}'s server (named {@code prefix} and a random suffix), with
   * Idemkit's schema applied and the record table in {@code layout}. Close it after use.
   */
  static IdemkitDatabase freshSchema(
      IdemkitDatabase base, String prefix, RecordLayout layout, int poolSize) throws SQLException {
    String schema = prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
    String url;
    try (Connection c = base.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create schema " + schema);
      url = c.getMetaData().getURL();
    }
    String plain = url.replaceAll("([?&])currentSchema=[^&]*&?", "$1").replaceAll("[?&]$", "");
    IdemkitDatabase db =
        base.connectAgain(
            plain + (plain.contains("?") ? "&" : "?") + "currentSchema=" + schema, poolSize);
    IdemkitSchema.migrate(db.dataSource(), layout);
    return db;
  }

  /** The server {@code IDEMKIT_JDBC_URL} names, else an embedded one in a fresh directory. */
  static IdemkitDatabase server(String name) throws java.io.IOException {
    String url = System.getenv("IDEMKIT_JDBC_URL");
    return url != null && !url.isBlank()
        ? IdemkitDatabase.fromEnvironment(2)
        : IdemkitDatabase.embedded(java.nio.file.Files.createTempDirectory(name), 2);
  }

  /** Drops the schema of {@link #freshSchema} that {@code dataSource} works in, with its tables. */
  static void dropSchema(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select quote_ident(current_schema())")) {
      rs.next();
      String schema = rs.getString(1);
      s.execute("drop schema " + schema + " cascade");
      System.out.println("dropped schema " + schema);
    }
  }

  /** The total size in bytes of the record table, every partition's heap and indexes. */
  static long bytes(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                """
                select sum(pg_table_size(t.oid) + pg_indexes_size(t.oid)) from pg_class t
                where t.oid = 'idemkit_record'::regclass
                   or t.oid in (select inhrelid from pg_inherits
                                 where inhparent = 'idemkit_record'::regclass)
                """)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Waits (up to {@code seconds}) until autovacuum has left at most 1% of the record table's rows
   * dead, as the statistics count them; on a server with autovacuum off, runs {@code VACUUM} on the
   * table (every partition) instead, as autovacuum would. Says which, and how long it took.
   */
  static String vacuumed(DataSource dataSource, int seconds) throws Exception {
    long started = System.nanoTime();
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      boolean on;
      try (ResultSet rs = s.executeQuery("select current_setting('autovacuum')::boolean")) {
        rs.next();
        on = rs.getBoolean(1);
      }
      if (!on) {
        s.execute("vacuum idemkit_record");
        return "autovacuum is off on this server: VACUUM run instead, %.1f s"
            .formatted((System.nanoTime() - started) / 1e9);
      }
      while ((System.nanoTime() - started) / 1e9 < seconds) {
        try (ResultSet rs =
            s.executeQuery(
                """
                select coalesce(sum(n_dead_tup), 0) <= 0.01 * greatest(sum(n_live_tup), 1)
                from pg_stat_user_tables
                where relid = 'idemkit_record'::regclass
                   or relid in (select inhrelid from pg_inherits
                                 where inhparent = 'idemkit_record'::regclass)
                """)) {
          rs.next();
          if (rs.getBoolean(1)) {
            break;
          }
        }
        Thread.sleep(2000);
      }
    }
    return "waited %.0f s for autovacuum".formatted((System.nanoTime() - started) / 1e9);
  }

  /**
   * Realistic rows: 200 tenants, random keys, real-looking fingerprints, a ~400-byte JSON body with
   * its headers and resource id, windows of 24 hours. By default the rows are written in the order
   * a service writes them, over the last 30 hours: the oldest 20% have ended (over the last 6
   * hours), and the table's physical order follows expiry, as it does in production where records
   * are appended as time passes. {@code scattered}: the worst case instead, every fifth row expired
   * (over the last two days) wherever it lies, so that each row a batch drops is on a page of its
   * own. Ends with {@code vacuum analyze}.
   */
  static void load(DataSource dataSource, int records, boolean scattered) throws SQLException {
    load(dataSource, records, scattered, 0, records);
  }

  /**
   * Rows {@code first} to {@code first + rows - 1} of a table of {@code records} as {@link
   * #load(DataSource, int, boolean)} writes it; rows from {@code records} on are newer than any.
   */
  static void load(DataSource dataSource, int records, boolean scattered, int first, int rows)
      throws SQLException {
    System.out.printf("loading %,d records ...%n", rows);
    long started = System.nanoTime();
    int chunk = 100_000;
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      for (int from = first; from < first + rows; from += chunk) {
        int to = Math.min(first + rows, from + chunk) - 1;
        s.execute(
            """
            insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,
                fencing_token, locked_until, response_status, response_headers, response_body,
                response_schema_version, resource_id, created_at, updated_at, expires_at)
            select 'tenant_' || (g %% 200), 'create_payment', md5(g::text || random()::text),
                'v1:sha256:' || md5(g::text) || md5(g::text || 'x'), 'COMPLETED', 1, t, 201,
                '{"Content-Type":"application/json","Location":"/v1/payments/' || g || '"}',
                convert_to(repeat('{"paymentId":"' || md5(g::text) || '","status":"COMPLETED"}',
                    6), 'UTF8'),
                1, 'pay_' || g, t, t, t + interval '24 hours'
            from (select g, case
                    when %b then now() - interval '30 hours'
                        + (g::float8 / %d) * interval '30 hours' + random() * interval '1 second'
                    when g %% 5 = 0
                    then now() - interval '72 hours' + (random() * interval '48 hours')
                    else now() - interval '24 hours' + (random() * interval '24 hours') + interval '1 minute'
                  end as t
                  from generate_series(%d, %d) g) x
            """
                .formatted(!scattered, records, from, to));
        if ((to + 1 - first) % 1_000_000 == 0 && to + 1 < first + rows) {
          System.out.printf(
              "  %,d of %,d loaded (%.0f s)%n",
              to + 1 - first, rows, (System.nanoTime() - started) / 1e9);
        }
      }
      System.out.println("  vacuum analyze ...");
      s.execute("vacuum analyze idemkit_record");
    }
    System.out.printf("loaded in %.1f s%n", (System.nanoTime() - started) / 1e9);
  }

  /**
   * The record table's size and its dead rows, over every partition: heap, indexes, dead tuples (as
   * the statistics count them) and, with the extension {@code pgstattuple} in the schema {@code
   * public}, the dead and free share of the heap ({@code pgstattuple_approx}: exact for pages with
   * dead rows, estimated from the free space map for the all-visible ones).
   */
  static String sizes(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                """
                select pg_size_pretty(sum(pg_table_size(t.oid))) as heap,
                    pg_size_pretty(sum(pg_indexes_size(t.oid))) as indexes,
                    sum(pg_table_size(t.oid) + pg_indexes_size(t.oid)) as bytes,
                    sum(coalesce(st.n_live_tup, 0)) as live, sum(coalesce(st.n_dead_tup, 0)) as dead
                from pg_class t left join pg_stat_user_tables st on st.relid = t.oid
                where t.oid = 'idemkit_record'::regclass
                   or t.oid in (select inhrelid from pg_inherits
                                 where inhparent = 'idemkit_record'::regclass)
                """)) {
      rs.next();
      String figures =
          "heap %s, indexes %s (%,d bytes in all); %,d live and %,d dead rows (statistics)"
              .formatted(
                  rs.getString("heap"),
                  rs.getString("indexes"),
                  rs.getLong("bytes"),
                  rs.getLong("live"),
                  rs.getLong("dead"));
      return figures + tuples(c) + indexes(c);
    }
  }

  /**
   * Each index of the record table and its size, a partitioned table's summed over its partitions
   * under the partitioned index's name: which index grows when the table is cleaned and refilled.
   */
  private static String indexes(Connection c) throws SQLException {
    StringBuilder line = new StringBuilder("\n  indexes:");
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                """
                select coalesce(parent.relname, i.relname) as name,
                    pg_size_pretty(sum(pg_relation_size(i.oid))) as size
                from pg_index x
                join pg_class i on i.oid = x.indexrelid
                left join pg_inherits h on h.inhrelid = i.oid
                left join pg_class parent on parent.oid = h.inhparent
                where x.indrelid = 'idemkit_record'::regclass
                   or x.indrelid in (select inhrelid from pg_inherits
                                      where inhparent = 'idemkit_record'::regclass)
                group by 1 order by sum(pg_relation_size(i.oid)) desc
                """)) {
      while (rs.next()) {
        line.append(' ').append(rs.getString("name")).append(' ').append(rs.getString("size"));
        line.append(',');
      }
    }
    line.setLength(line.length() - 1);
    return line.toString();
  }

  private static String tuples(Connection c) {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                """
                select round(100.0 * sum(p.dead_tuple_len) / nullif(sum(p.table_len), 0), 1),
                    round(100.0 * sum(p.approx_free_space) / nullif(sum(p.table_len), 0), 1)
                from (select 'idemkit_record'::regclass as oid
                      where not exists (select 1 from pg_inherits
                                         where inhparent = 'idemkit_record'::regclass)
                      union all
                      select inhrelid from pg_inherits
                       where inhparent = 'idemkit_record'::regclass) t,
                    lateral public.pgstattuple_approx(t.oid) p
                """)) {
      rs.next();
      return "; pgstattuple_approx: %s%% dead, %s%% free"
          .formatted(rs.getString(1), rs.getString(2));
    } catch (SQLException e) {
      return "; (no pgstattuple: " + e.getMessage().lines().findFirst().orElse("") + ")";
    }
  }
}
